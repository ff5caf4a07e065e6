import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPENAPI_PATH } from "../../src/app";
import { buildTestApp, type TestApp } from "../support/app";
import { authMatrix } from "../support/auth-matrix";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { startTestIssuer, type TestIssuer } from "../support/issuer";
import { ROUTES } from "../support/routes";

let db: TestDatabase;
let issuer: TestIssuer;
let t: TestApp;

beforeAll(async () => {
  [db, issuer] = await Promise.all([createTestDatabase(), startTestIssuer()]);
  t = buildTestApp({ database: db.database, issuer, env: { OBSERVABILITY_TOKEN: "observability-secret-for-tests" } });
});
afterAll(async () => {
  await Promise.all([db.drop(), issuer.close()]);
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
  authMatrix({ app: () => t, issuer: () => issuer }, route);
});
