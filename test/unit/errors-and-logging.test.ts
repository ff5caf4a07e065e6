import { describe, expect, it } from "vitest";
import { ApiError, ERROR_STATUS, aiBody, codeForStatus, standardBody } from "../../src/errors";
import { configuredSecrets, createJsonLogger, createRedactor, redact } from "../../src/platform/logger";
import { createIdGenerator, idPattern } from "../../src/platform/ids";
import { fixedClock } from "../../src/platform/clock";

describe("ApiError", () => {
  it("takes its status from the closed map", () => {
    for (const [code, status] of Object.entries(ERROR_STATUS)) {
      expect(new ApiError(code as keyof typeof ERROR_STATUS).status).toBe(status);
    }
  });

  it("renders shape 1 with retry_after only on rate limits", () => {
    expect(standardBody(new ApiError("rate_limit_exceeded", "slow down", { retryAfter: 12 }), "req_1")).toEqual({
      error: "rate_limit_exceeded",
      message: "slow down",
      code: 429,
      retry_after: 12,
      requestId: "req_1",
    });
    expect(standardBody(new ApiError("not_found", "gone", { retryAfter: 5 }), "req_1")).not.toHaveProperty("retry_after");
  });

  it("renders shape 2 with the language and flattened details", () => {
    const body = aiBody(new ApiError("invalid_tone", undefined, { details: [{ path: "tone", message: "bad" }] }), "req_2", "fr", new Date(0));
    expect(body).toEqual({
      success: false,
      error: { code: "invalid_tone", message: "unsupported tone", details: "tone: bad", language: "fr" },
      timestamp: "1970-01-01T00:00:00.000Z",
      requestId: "req_2",
    });
  });

  it("maps library statuses onto known codes", () => {
    expect(codeForStatus(413)).toBe("payload_too_large");
    expect(codeForStatus(418)).toBe("invalid_input");
    expect(codeForStatus(502)).toBe("internal_error");
  });
});

describe("logging", () => {
  it("never writes credentials", () => {
    const lines: string[] = [];
    const logger = createJsonLogger({ sink: (l) => lines.push(l) });
    logger.info("x", {
      authorization: "Bearer abc.def.ghi",
      nested: { apiKey: "k", note: "sent Bearer sk_live_123 to eyJhbGciOi.eyJzdWIiOi.sig" },
    });
    const line = lines.join("\n");
    expect(line).not.toContain("abc.def.ghi");
    expect(line).not.toContain("sk_live_123");
    expect(line).not.toContain("eyJhbGciOi");
    expect(redact({ password: "p" })).toEqual({ password: "[redacted]" });
  });

  it("writes flat records as they are and redacts flat ones that carry a credential", () => {
    const lines: string[] = [];
    const logger = createJsonLogger({ sink: (l) => lines.push(l), clock: () => 0 });
    logger.info("request", { requestId: "req_1", status: 404, ok: false, gone: null, skipped: undefined, path: 'odd "quoted" \u2028 path' });
    logger.info("flat secret", { token: "t0ps3cret", note: "Bearer abc123" });
    logger.info("bare");
    const [first, second, third] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(first).toEqual({ time: "1970-01-01T00:00:00.000Z", level: "info", msg: "request", requestId: "req_1", status: 404, ok: false, gone: null, path: 'odd "quoted" \u2028 path' });
    expect(second).toMatchObject({ msg: "flat secret", token: "[redacted]", note: "Bearer [redacted]" });
    expect(third).toEqual({ time: "1970-01-01T00:00:00.000Z", level: "info", msg: "bare" });
  });

  it("writes the access line with every field, escaped, and redacts a credential in the path or request id", () => {
    const lines: string[] = [];
    const logger = createJsonLogger({ sink: (l) => lines.push(l), clock: () => 0 });
    logger.request({ requestId: "req_1", method: "GET", route: "/api/v1/profile/:userId", path: '/odd "quoted" \u2028\\ path', status: 200, durationMs: 3, userId: "usr_1" });
    logger.request({ requestId: "req_2", method: "POST", route: "/*", path: "/x/eyJhbGciOi.eyJzdWIiOi.sig", status: 404, durationMs: 0 });
    logger.request({ requestId: "eyJhbGciOi.eyJzdWIiOi.sig", method: "GET", route: "/*", path: "/", status: 404, durationMs: 0 });
    const [first, second, third] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(first).toEqual({
      time: "1970-01-01T00:00:00.000Z",
      level: "info",
      msg: "request",
      requestId: "req_1",
      method: "GET",
      route: "/api/v1/profile/:userId",
      path: '/odd "quoted" \u2028\\ path',
      status: 200,
      durationMs: 3,
      userId: "usr_1",
    });
    expect(second).toMatchObject({ msg: "request", requestId: "req_2", status: 404, path: "/x/[redacted-jwt]" });
    expect(second).not.toHaveProperty("userId");
    expect(third).toMatchObject({ msg: "request", requestId: "[redacted-jwt]", path: "/" });
  });

  describe("redacts every kind of secret wherever a logged string holds it", () => {
    const apiKey = "0123456789abcdef".repeat(4);
    const jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEifQ.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg";
    const webhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const callbackToken = "9f".repeat(32);
    const providerSecret = "card-a-live-4f7Qz1";
    const kinds = { "an API key": apiKey, "a JWT": jwt, "a webhook secret": webhookSecret, "a callback token": callbackToken, "a provider secret": providerSecret };

    it.each(Object.entries(kinds))("%s in a path, a query, a header and a body", (_kind, secret) => {
      const lines: string[] = [];
      const logger = createJsonLogger({ sink: (l) => lines.push(l), secrets: configuredSecrets({ CARD_A_API_KEY: providerSecret, LOG_LEVEL: "info" }) });
      logger.request({ requestId: "req_1", method: "GET", route: "/*", path: `/api/v1/things/${secret}`, status: 404, durationMs: 1 });
      logger.info("upstream call failed", {
        url: `https://provider.example/v1/charges?expand=all&ref=${secret}`,
        headers: { "x-trace": secret, "x-api-key": "anything" },
        body: { note: `paid with ${secret}`, items: [{ ref: secret }] },
        err: `Error: provider answered 401 for ${secret}\n    at call (file.ts:1:1)`,
      });
      logger.warn(`rejected ${secret}`);
      const text = lines.join("\n");
      expect(text).not.toContain(secret);
      // Not even a recognisable piece of it.
      expect(text).not.toContain(secret.slice(-12));
      expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)[0]).toMatchObject({ path: expect.stringMatching(/^\/api\/v1\/things\/\[redacted/) });
    });

    it("credentials named as such in a query string or quoted JSON, and the password of a URL", () => {
      const scrub = createRedactor();
      expect(scrub.text("/cb?token=t0p&x=1&api_key=k3y&sig=s1g")).toBe("/cb?token=[redacted]&x=1&api_key=[redacted]&sig=[redacted]");
      expect(scrub.text('provider said {"client_secret": "s3cr3t", "ok": "fine"}')).toBe('provider said {"client_secret": "[redacted]", "ok": "fine"}');
      expect(scrub.text("connect postgres://api:hunter2@db.internal:5432/app failed")).toBe("connect postgres://[redacted]@db.internal:5432/app failed");
      // Our own ids are not secrets.
      expect(scrub.text("usr_01m8f4dt584myyhkc9xmspxdnn req_01m8f4dt4reg5k6qxcfy7hxfra")).toBe("usr_01m8f4dt584myyhkc9xmspxdnn req_01m8f4dt4reg5k6qxcfy7hxfra");
    });

    it("takes the configured credentials by name, and the passwords of configured URLs", () => {
      expect(
        configuredSecrets({ CARD_B_SECRET_KEY: "sk_live_abcdef", OBSERVABILITY_TOKEN: "observability-1234", REDIS_URL: "redis://:r3dis-pass@cache:6379", KV_PREFIX: "production:", SHORT_KEY: "k" }).sort(),
      ).toEqual(["observability-1234", "r3dis-pass", "sk_live_abcdef"]);
    });

    it("cuts the access line's path only after redacting it, and writes nothing below the depth it walks", () => {
      const lines: string[] = [];
      const logger = createJsonLogger({ sink: (l) => lines.push(l) });
      logger.request({ requestId: "req_1", method: "GET", route: "/*", path: `/${"a".repeat(170)}/${apiKey}`, status: 404, durationMs: 0 });
      let deep: Record<string, unknown> = { secretless: "bottom" };
      for (let i = 0; i < 12; i++) deep = { next: deep };
      logger.info("deep", deep);
      const [access, nested] = lines;
      expect(access).not.toContain(apiKey.slice(0, 20));
      expect(nested).not.toContain("bottom");
      expect(nested).toContain("[too deep]");
    });
  });

  it("respects the level", () => {
    const lines: string[] = [];
    const logger = createJsonLogger({ level: "warn", sink: (l) => lines.push(l) });
    logger.info("hidden");
    logger.request({ requestId: "req_1", method: "GET", route: "/*", path: "/", status: 404, durationMs: 0 });
    logger.warn("shown");
    expect(lines).toHaveLength(1);
  });
});

describe("ids", () => {
  it("are prefixed, well-formed and sort by time", () => {
    const clock = fixedClock(1_700_000_000_000);
    const ids = createIdGenerator(clock, { bytes: (n) => crypto.getRandomValues(new Uint8Array(n)) });
    const a = ids.next("usr");
    clock.advance(1);
    const b = ids.next("usr");
    expect(a).toMatch(idPattern("usr"));
    expect(a < b).toBe(true);
  });
});
