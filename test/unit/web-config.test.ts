import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../src/config";
import { nodeWebConfig } from "../../src/node/web-config";
import { parseWebConfig } from "../../src/web/config";
import { safeReturnTo } from "../../src/web/return-to";

const BASE = { WEB_ORIGIN: "https://app.example.com", WEB_COOKIE_SECRET: "x".repeat(32), OIDC_ISSUER: "https://id.example.com", OIDC_CLIENT_ID: "web" };

function variablesOf(env: Record<string, string>): string[] {
  try {
    parseWebConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.variables;
    throw err;
  }
  return [];
}

describe("the web app's configuration", () => {
  it("accepts a complete environment, OIDC_CLIENT_SECRET optional", () => {
    expect(parseWebConfig(BASE)).toMatchObject({ WEB_ORIGIN: "https://app.example.com", OIDC_SCOPES: "openid email", WEB_PORT: 8788 });
    expect(parseWebConfig({ ...BASE, OIDC_CLIENT_SECRET: "s" }).OIDC_CLIENT_SECRET).toBe("s");
  });

  it("names every missing or bad variable", () => {
    expect(variablesOf({}).sort()).toEqual(["OIDC_CLIENT_ID", "OIDC_ISSUER", "WEB_COOKIE_SECRET", "WEB_ORIGIN"]);
    expect(variablesOf({ ...BASE, WEB_COOKIE_SECRET: "short" })).toEqual(["WEB_COOKIE_SECRET"]);
    expect(variablesOf({ ...BASE, WEB_ORIGIN: "https://app.example.com/path" })).toEqual(["WEB_ORIGIN"]);
    expect(variablesOf({ ...BASE, WEB_ORIGIN: "http://app.example.com" })).toEqual(["WEB_ORIGIN"]);
    expect(variablesOf({ ...BASE, NODE_ENV: "production", OIDC_ISSUER: "http://id.example.com" })).toEqual(["OIDC_ISSUER"]);
    expect(variablesOf({ ...BASE, OIDC_SCOPES: "email" })).toEqual(["OIDC_SCOPES"]);
  });

  it("on Node: off without an issuer and client, loopback defaults outside production, API_URL required in production", () => {
    const api = parseConfig({ NODE_ENV: "development", PORT: "9100" });
    expect(nodeWebConfig({}, api)).toMatchObject({ devSignIn: true, config: { OIDC_ISSUER: "http://127.0.0.1:9102", OIDC_CLIENT_ID: "web-dev" } });
    expect(nodeWebConfig({ OIDC_ISSUER: BASE.OIDC_ISSUER }, api)).toHaveProperty("off");
    const on = nodeWebConfig({ OIDC_ISSUER: BASE.OIDC_ISSUER, OIDC_CLIENT_ID: "web", WEB_COOKIE_SECRET: BASE.WEB_COOKIE_SECRET }, api);
    expect(on).toMatchObject({ config: { WEB_ORIGIN: "http://127.0.0.1:8788" }, apiUrl: "http://127.0.0.1:9100" });
    const prod = parseConfig({ NODE_ENV: "production", OIDC_ISSUER: BASE.OIDC_ISSUER, OIDC_AUDIENCE: "api" });
    expect(() => nodeWebConfig({ ...BASE, NODE_ENV: "production" }, prod)).toThrow(/API_URL/);
  });
});

describe("returnTo", () => {
  it.each([
    ["/wallet?x=1#y", "/wallet?x=1#y"],
    ["https://evil.example/", "/"],
    ["//evil.example/", "/"],
    ["/\\evil.example", "/"],
    ["/%5Cevil", "/%5Cevil"],
    ["javascript:alert(1)", "/"],
    ["/ok\nSet-Cookie:x", "/"],
    ["/api/auth/logout", "/"],
    [undefined, "/"],
  ])("%s → %s", (raw, expected) => {
    expect(safeReturnTo(raw, "https://app.example.com")).toBe(expected);
  });
});
