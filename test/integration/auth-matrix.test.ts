import { beforeAll, describe, expect, it } from "vitest";
import { OPENAPI_PATH } from "../../src/app";
import { buildTestApp, type TestApp } from "../support/app";
import { authMatrix } from "../support/auth-matrix";
import { useTestEnvironment } from "../support/environment";
import { ROUTES } from "../support/routes";

// Every payment provider configured (so webhooks check their signatures) but unreachable.
const PAYMENT_PROVIDERS_UNREACHABLE = {
  CARD_A_API_URL: "http://127.0.0.1:9",
  CARD_A_API_KEY: "k",
  CARD_A_STORE_ID: "1",
  CARD_A_VARIANT_ID: "1",
  CARD_A_WEBHOOK_SECRET: "matrix-card-a",
  CARD_B_API_URL: "http://127.0.0.1:9",
  CARD_B_SECRET_KEY: "k",
  CARD_B_WEBHOOK_SECRET: "matrix-card-b",
  CRYPTO_API_URL: "http://127.0.0.1:9",
  CRYPTO_API_KEY: "k",
  CRYPTO_IPN_SECRET: "matrix-crypto",
  MOBILE_MONEY_API_URL: "http://127.0.0.1:9",
  MOBILE_MONEY_CONSUMER_KEY: "k",
  MOBILE_MONEY_CONSUMER_SECRET: "s",
  MOBILE_MONEY_SHORTCODE: "174379",
  MOBILE_MONEY_PASSKEY: "p",
  MOBILE_MONEY_CALLBACK_URL: "https://api.example.test/api/v1/mobile-money/callback",
  PAYMENT_FX_RATES: "KES=0.01",
};
const env = useTestEnvironment();
let t: TestApp;

beforeAll(() => {
  t = buildTestApp({ database: env.db.database, issuer: env.issuer, env: { OBSERVABILITY_TOKEN: "observability-secret-for-tests", ...PAYMENT_PROVIDERS_UNREACHABLE } });
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
