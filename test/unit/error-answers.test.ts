import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { ApiError, standardBody } from "../../src/errors";
import { notFound, onError } from "../../src/http/error-handler";
import type { AppEnv } from "../../src/http/env";
import { DrizzleQueryError } from "drizzle-orm/errors";

/** The error path with nothing but a request id on the context. */
function appThrowing(err: unknown, requestId = "req_0123456789") {
  const app = new Hono<AppEnv>();
  app.use("*", async (c, next) => {
    c.set("requestId", requestId);
    await next();
  });
  app.get("/boom", () => {
    throw err;
  });
  app.notFound(notFound);
  app.onError(onError);
  return app;
}

describe("error answers", () => {
  it("log a failed query's text and the driver's cause, but not its bound values", async () => {
    const lines: unknown[] = [];
    const app = new Hono<AppEnv>();
    app.use("*", async (c, next) => {
      c.set("requestId", "req_0123456789");
      c.set("deps", { logger: { error: (msg: string, fields: unknown) => lines.push({ msg, fields }) }, clock: { now: () => 0 } } as unknown as AppEnv["Variables"]["deps"]);
      await next();
    });
    app.get("/boom", () => {
      throw new DrizzleQueryError('insert into "users" ("email", "phone") values ($1, $2)', ["amani@example.com", "+254700000001\nsecond line"], new Error("duplicate key"));
    });
    app.onError(onError);
    const res = await app.request("/boom");
    expect(res.status).toBe(500);
    const logged = JSON.stringify(lines);
    expect(logged).toContain('insert into \\"users\\"');
    expect(logged).toContain("params: (not logged)");
    expect(lines).toMatchObject([{ fields: { error: { cause: { name: "Error", message: "duplicate key" } } } }]);
    expect(logged).not.toContain("amani@example.com");
    expect(logged).not.toContain("+254700000001");
    expect(logged).not.toContain("second line");
  });

  const odd = 'quote " backslash \\ newline \n tab \t control \u0001 line sep \u2028 emoji 😀 é';

  it("write shape 1 byte-compatibly with JSON.stringify, whatever the message holds", async () => {
    for (const err of [new ApiError("conflict", odd), new ApiError("forbidden"), new ApiError("invalid_input", "bad", { details: [{ path: "a", message: odd }] })]) {
      const res = await appThrowing(err).request("/boom");
      expect(res.status).toBe(err.status);
      expect(await res.text()).toBe(JSON.stringify(standardBody(err, "req_0123456789")));
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(res.headers.get("x-request-id")).toBe("req_0123456789");
    }
  });

  it("write a header once however its name is spelled", async () => {
    const err = new ApiError("rate_limit_exceeded", "slow down", { retryAfter: 7, headers: { "Retry-After": "7", "X-RateLimit-Limit": "100" } });
    const res = await appThrowing(err).request("/boom");
    expect(res.headers.get("retry-after")).toBe("7");
    expect(res.headers.get("x-ratelimit-limit")).toBe("100");
  });

  it("keep an error's own headers and rate-limit fields", async () => {
    const err = new ApiError("rate_limit_exceeded", "slow down", { retryAfter: 7, headers: { "X-RateLimit-Limit": "100" } });
    const res = await appThrowing(err).request("/boom");
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("7");
    expect(res.headers.get("x-ratelimit-limit")).toBe("100");
    expect(await res.json()).toEqual({ error: "rate_limit_exceeded", message: "slow down", code: 429, requestId: "req_0123456789", retry_after: 7 });
  });

  it("answer an unknown path 404 with the method and path in the message", async () => {
    const res = await appThrowing(new Error("unused")).request('/a"b');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "not_found", message: 'no route for GET /a"b', code: 404, requestId: "req_0123456789" });
  });
});
