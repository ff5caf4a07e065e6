import { beforeAll, describe, expect, it } from "vitest";
import { OPENAPI_PATH } from "../../src/app";
import { buildTestApp, type TestApp } from "../support/app";
import { authMatrix } from "../support/auth-matrix";
import { useTestEnvironment } from "../support/environment";
import { OUTSIDE_PARTIES_UNREACHABLE, ROUTES } from "../support/routes";

const env = useTestEnvironment();
let t: TestApp;

beforeAll(() => {
  t = buildTestApp({ database: env.db.database, issuer: env.issuer, env: { OBSERVABILITY_TOKEN: "observability-secret-for-tests", ...OUTSIDE_PARTIES_UNREACHABLE } });
});

describe("route list", () => {
  it("names every route the app registers, and nothing else", () => {
    const registered = t.app.routes
      .filter((r) => r.method !== "ALL" && r.path !== OPENAPI_PATH)
      .map((r) => `${r.method} ${r.path.replace(/:(\w+)(\{[^}]*\})?/g, "{$1}")}`);
    const listed = ROUTES.map((r) => `${r.method} ${r.template}`);
    expect([...new Set(registered)].sort()).toEqual([...listed].sort());
  });
});

describe.each(ROUTES)("$method $template ($access)", (route) => {
  authMatrix({ app: () => t, issuer: () => env.issuer }, route);
});
