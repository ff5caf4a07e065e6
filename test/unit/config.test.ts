import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../src/config";

function configError(env: Record<string, string>): ConfigError {
  try {
    parseConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

describe("parseConfig", () => {
  it("gives the documented defaults for an empty environment", () => {
    const c = parseConfig({});
    expect(c.PORT).toBe(8787);
    expect(c.HOST).toBe("127.0.0.1");
    expect(c.DATA_DIR).toBe("./.data");
    expect(c.OIDC_ROLES_CLAIM).toBe("roles");
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.INFERENCE_API).toBe("ollama");
    // No proxy trusted: the socket's peer is the client, X-Forwarded-For ignored.
    expect(c.TRUSTED_PROXY_HOPS).toBe(0);
    expect(parseConfig({ TRUSTED_PROXY_HOPS: "2" }).TRUSTED_PROXY_HOPS).toBe(2);
  });

  it("treats blank values as unset", () => {
    expect(parseConfig({ DATABASE_URL: "", PORT: " " }).DATABASE_URL).toBeUndefined();
  });

  it.each([
    [{ PORT: "eighty" }, "PORT"],
    [{ PORT: "70000" }, "PORT"],
    [{ DATABASE_URL: "mysql://x@y/z" }, "DATABASE_URL"],
    [{ REDIS_URL: "http://127.0.0.1:6379" }, "REDIS_URL"],
    [{ UPSTASH_REDIS_REST_URL: "https://example.upstash.io" }, "UPSTASH_REDIS_REST_TOKEN"],
    [{ INFERENCE_URL: "http://a:11434,not a url" }, "INFERENCE_URL"],
    [{ INFERENCE_API: "commercial" }, "INFERENCE_API"],
    [{ OIDC_ISSUER: "https://id.example.com" }, "OIDC_AUDIENCE"],
    [{ NODE_ENV: "production" }, "OIDC_ISSUER"],
    [{ NODE_ENV: "production", OIDC_ISSUER: "http://id.example.com", OIDC_AUDIENCE: "api" }, "OIDC_ISSUER"],
    [{ OBSERVABILITY_TOKEN: "short" }, "OBSERVABILITY_TOKEN"],
    [{ VOICE_RUNTIME_SECRET: "too-short" }, "VOICE_RUNTIME_SECRET"],
    [{ VOICE_TIMEOUT_MS: "0" }, "VOICE_TIMEOUT_MS"],
    [{ TRUSTED_PROXY_HOPS: "-1" }, "TRUSTED_PROXY_HOPS"],
    [{ TRUSTED_PROXY_HOPS: "1.5" }, "TRUSTED_PROXY_HOPS"],
    [{ TRUSTED_PROXY_HOPS: "true" }, "TRUSTED_PROXY_HOPS"],
    [{ TRUSTED_PROXY_HOPS: "11" }, "TRUSTED_PROXY_HOPS"],
  ])("names the bad variable in %j", (env, variable) => {
    const err = configError(env);
    expect(err.variables).toContain(variable);
    expect(err.message).toContain(variable);
  });

  it("reports every bad variable at once", () => {
    const err = configError({ PORT: "x", DATABASE_URL: "nope" });
    expect(err.variables).toEqual(expect.arrayContaining(["PORT", "DATABASE_URL"]));
  });

  it("names the rules across variables together with a malformed one", () => {
    const err = configError({ NODE_ENV: "production", LOG_LEVEL: "x", UPSTASH_REDIS_REST_URL: "https://example.upstash.io" });
    expect(err.variables).toEqual(["LOG_LEVEL", "UPSTASH_REDIS_REST_TOKEN", "OIDC_ISSUER"]);
  });

  it("takes an https issuer in production, and http only on a loopback address", () => {
    const production = { NODE_ENV: "production", OIDC_AUDIENCE: "api", DATABASE_URL: "postgres://u@db.example/app" };
    for (const issuer of ["https://id.example.com", "http://127.0.0.1:9000", "http://localhost:9000/realms/x", "http://[::1]:9000"]) {
      expect(parseConfig({ ...production, OIDC_ISSUER: issuer }).OIDC_ISSUER).toBe(issuer);
    }
    expect(configError({ ...production, OIDC_ISSUER: "http://id.example.com" }).message).toContain("OIDC_ISSUER must be an https URL in production");
    // Outside production a plain-http issuer is fine (a local identity provider).
    expect(parseConfig({ OIDC_ISSUER: "http://id.internal:8080", OIDC_AUDIENCE: "api" }).OIDC_ISSUER).toBe("http://id.internal:8080");
  });

  it("refuses a CARD_A_CURRENCY other than USD that PAYMENT_FX_RATES has no rate for, naming both", () => {
    const missing: Record<string, string>[] = [{ CARD_A_CURRENCY: "GBP" }, { CARD_A_CURRENCY: "gbp", PAYMENT_FX_RATES: "EUR=1.08,KES=0.0077" }];
    for (const env of missing) {
      const err = configError(env);
      expect(err.variables).toEqual(["CARD_A_CURRENCY", "PAYMENT_FX_RATES"]);
      expect(err.message).toContain("CARD_A_CURRENCY is GBP, which PAYMENT_FX_RATES gives no rate for");
      expect(err.message).toContain("PAYMENT_FX_RATES needs GBP=<US dollars per GBP> for CARD_A_CURRENCY");
    }
    expect(parseConfig({ CARD_A_CURRENCY: "gbp", PAYMENT_FX_RATES: "GBP=1.27" }).CARD_A_CURRENCY).toBe("GBP");
    expect(parseConfig({ CARD_A_CURRENCY: "usd" }).CARD_A_CURRENCY).toBe("USD");
    expect(parseConfig({ CARD_A_CURRENCY: " " }).CARD_A_CURRENCY).toBe("USD");
    // A rate table that does not read is reported once, by itself.
    expect(configError({ CARD_A_CURRENCY: "GBP", PAYMENT_FX_RATES: "GBP:1.27" }).variables).toEqual(["PAYMENT_FX_RATES"]);
  });

  it("requires PAYMENTS_PUBLIC_URL in production once card-b or crypto is configured, and only then", () => {
    const production = { NODE_ENV: "production", OIDC_ISSUER: "https://id.example.com", OIDC_AUDIENCE: "api" };
    const cardB = { CARD_B_API_URL: "https://api.card-b.example", CARD_B_SECRET_KEY: "k", CARD_B_WEBHOOK_SECRET: "h" };
    const crypto = { CRYPTO_API_URL: "https://api.crypto.example", CRYPTO_API_KEY: "k", CRYPTO_IPN_SECRET: "s" };
    expect(configError({ ...production, ...cardB }).message).toBe("invalid configuration: PAYMENTS_PUBLIC_URL is required in production when card-b payments are configured");
    expect(configError({ ...production, ...crypto, PAYMENTS_PUBLIC_URL: " " }).variables).toEqual(["PAYMENTS_PUBLIC_URL"]);
    expect(configError({ ...production, ...cardB, ...crypto }).message).toContain("when card-b or crypto payments are configured");
    expect(parseConfig({ ...production, ...cardB, ...crypto, PAYMENTS_PUBLIC_URL: "https://api.example.com" }).PAYMENTS_PUBLIC_URL).toBe("https://api.example.com");
    // Not configured (a provider missing a setting answers 503 and calls nothing back), or not production.
    expect(parseConfig({ ...production, CARD_B_API_URL: cardB.CARD_B_API_URL, CRYPTO_API_KEY: "k" }).PAYMENTS_PUBLIC_URL).toBeUndefined();
    expect(parseConfig({ ...cardB, ...crypto }).PAYMENTS_PUBLIC_URL).toBeUndefined();
  });

  it("runs one process by default, and more only on a database and a store the workers share", () => {
    expect(parseConfig({}).WEB_CONCURRENCY).toBe(1);
    const shared = { DATABASE_URL: "postgres://db/app", REDIS_URL: "redis://cache:6379" };
    expect(parseConfig({ ...shared, WEB_CONCURRENCY: "4" }).WEB_CONCURRENCY).toBe(4);
    expect(parseConfig({ DATABASE_URL: shared.DATABASE_URL, UPSTASH_REDIS_REST_URL: "https://kv.example.test", UPSTASH_REDIS_REST_TOKEN: "t", WEB_CONCURRENCY: "2" }).WEB_CONCURRENCY).toBe(2);
    // The embedded database opens in one process only; an in-process store is one worker's own.
    expect(configError({ WEB_CONCURRENCY: "2" }).variables).toEqual(["DATABASE_URL", "REDIS_URL"]);
    expect(configError({ WEB_CONCURRENCY: "2", DATABASE_URL: shared.DATABASE_URL }).message).toContain("REDIS_URL or UPSTASH_REDIS_REST_URL is required when WEB_CONCURRENCY is above 1");
    for (const bad of ["0", "-1", "1.5", "65", "many"]) expect(configError({ ...shared, WEB_CONCURRENCY: bad }).variables, bad).toEqual(["WEB_CONCURRENCY"]);
  });

  it("splits INFERENCE_URL into hosts without trailing slashes", () => {
    expect(parseConfig({ INFERENCE_URL: "http://gpu-1:11434/, http://gpu-2:11434" }).INFERENCE_URL).toEqual([
      "http://gpu-1:11434",
      "http://gpu-2:11434",
    ]);
  });
});
