import { describe, expect, it } from "vitest";
import { OPENAPI_PATH, UNDOCUMENTED_PATHS } from "../../src/app";
import { createPgDatabase } from "../../src/node/database";
import { createRedisStore } from "../../src/node/kv-redis";
import { buildTestApp } from "../support/app";
import { useTestDatabase } from "../support/environment";

const env = useTestDatabase();

describe("GET /health", () => {
  it("answers 200 with both checks ok", async () => {
    const t = buildTestApp({ database: env.db.database });
    const res = await t.request("/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok", version: "0.1.0", checks: { database: "ok", store: "ok" } });
  });

  it("answers 503 naming the database when it is unreachable, without hanging", async () => {
    const unreachable = createPgDatabase("postgres://postgres@127.0.0.1:1/nothing", { max: 1 });
    try {
      const t = buildTestApp({ database: unreachable });
      const started = Date.now();
      const res = await t.request("/health");
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({
        status: "unavailable",
        checks: { database: "down", store: "ok" },
        error: "service_unavailable",
        code: 503,
      });
    } finally {
      await unreachable.close();
    }
  });

  it("reports a lost store as degraded but keeps serving", async () => {
    const deadStore = createRedisStore({ url: "redis://127.0.0.1:1" });
    try {
      const t = buildTestApp({ database: env.db.database, kv: deadStore });
      const res = await t.request("/health");
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ status: "degraded", checks: { database: "ok", store: "down" } });
    } finally {
      await deadStore.close();
    }
  });
});

describe("OpenAPI document", () => {
  it("is OpenAPI 3.1 and documents every registered route", async () => {
    const t = buildTestApp({ database: env.db.database });
    const res = await t.request(OPENAPI_PATH);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe("3.1.0");

    const registered = t.app.routes
      .filter((r) => r.method !== "ALL" && !UNDOCUMENTED_PATHS.has(r.path))
      .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)(\{[^}]*\})?/g, "{$1}")}`);
    expect(registered.length).toBeGreaterThan(0);
    const documented = new Set(Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`)));
    const missing = registered.filter((r) => !documented.has(r));
    expect(missing).toEqual([]);
  });

  it("declares the headers every answer carries: the request id everywhere, the quota headers once counted, Retry-After on 429", async () => {
    const t = buildTestApp({ database: env.db.database });
    type Op = { "x-rate-limit"?: string; responses: Record<string, { headers?: Record<string, { $ref: string }> }> };
    const doc = (await (await t.request(OPENAPI_PATH)).json()) as { paths: Record<string, Record<string, Op>>; components: { headers: Record<string, { required?: boolean }> } };
    const headersOf = (path: string, method: string, status: string) => Object.keys(doc.paths[path]?.[method]?.responses[status]?.headers ?? {});
    const withoutRequestId = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).flatMap(([method, op]) => Object.entries(op.responses).filter(([, r]) => !r.headers?.["X-Request-Id"]).map(([status]) => `${method} ${path} ${status}`)),
    );
    expect(withoutRequestId).toEqual([]);
    const quota = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"];
    const aiQuota = ["X-AI-RateLimit-Limit", "X-AI-RateLimit-Remaining", "X-AI-RateLimit-Reset"];
    expect(doc.paths["/api/v1/wallet/transfer"]?.post?.["x-rate-limit"]).toBe("general");
    expect(headersOf("/api/v1/wallet/transfer", "post", "200")).toEqual(["X-Request-Id", ...quota]);
    expect(headersOf("/api/v1/wallet/transfer", "post", "429")).toEqual(["X-Request-Id", ...quota, "Retry-After"]);
    // Answered before the limiter counts the request.
    expect(headersOf("/api/v1/wallet/transfer", "post", "401")).toEqual(["X-Request-Id"]);
    expect(headersOf("/api/v1/wallet/transfer", "post", "413")).toEqual(["X-Request-Id"]);
    expect(doc.paths["/api/v1/ai-agents/chat/response"]?.post?.["x-rate-limit"]).toBe("ai");
    expect(headersOf("/api/v1/ai-agents/chat/response", "post", "200")).toEqual(["X-Request-Id", ...quota, ...aiQuota]);
    expect(headersOf("/health", "get", "200")).toEqual(["X-Request-Id"]);
    expect(doc.components.headers.RequestId?.required).toBe(true);
    expect(doc.components.headers.RetryAfter?.required).toBe(true);
    expect(doc.components.headers.RateLimitRemaining?.required).toBeUndefined();
  });

  it("gives every error answer a body schema: shape 2 on the AI routes' own errors, shape 1 elsewhere", async () => {
    const t = buildTestApp({ database: env.db.database });
    type Schema = { $ref?: string; anyOf?: Schema[]; oneOf?: Schema[] };
    type Response = { content?: Record<string, { schema?: Schema }> };
    // A status two layers answer in their own shapes lists both ("AiError|Error").
    const refOf = (schema: Schema | undefined): string | undefined =>
      schema?.$ref ?? ((schema?.anyOf ?? schema?.oneOf)?.map((s) => s.$ref).every(Boolean) ? (schema?.anyOf ?? schema?.oneOf)?.map((s) => s.$ref).join("|") : undefined);
    const doc = (await (await t.request(OPENAPI_PATH)).json()) as { paths: Record<string, Record<string, { responses: Record<string, Response> }>> };
    const bodiless: string[] = [];
    const shapes = new Map<string, string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const [status, response] of Object.entries(op.responses)) {
          if (Number(status) < 400) continue;
          const ref = refOf(response.content?.["application/json"]?.schema);
          if (!ref) bodiless.push(`${method} ${path} ${status}`);
          else shapes.set(`${method} ${path} ${status}`, ref.replaceAll("#/components/schemas/", ""));
        }
      }
    }
    expect(bodiless).toEqual([]);
    expect(shapes.get("post /api/v1/wallet/transfer 422")).toBe("Error");
    expect(shapes.get("post /api/v1/ai-agents/support-video/request 409")).toBe("AiError");
    expect(shapes.get("post /api/v1/ai-agents/chat/response 400")).toBe("AiError");
    expect(shapes.get("get /api/v1/ai-agents/context/stats 403")).toBe("AiError");
    expect(shapes.get("get /api/v1/admin/api-keys 403")).toBe("Error");
    // Authentication and rate limits answer shape 1 on every route, the AI routes included.
    expect(shapes.get("post /api/v1/ai-agents/chat/response 401")).toBe("Error");
    expect(shapes.get("post /api/v1/ai-agents/chat/response 429")).toBe("Error");
    // 503: the route's own (no inference host, shape 2) or the identity provider's (shape 1).
    expect(shapes.get("post /api/v1/ai-agents/chat/response 503")).toBe("AiError|Error");
    // What the routes answer besides their own errors: oversized bodies, an identity provider
    // that cannot hand over its keys, the AI routes' refusals, webhooks' unusable bodies.
    const expected = {
      "post /api/v1/wallet/transfer 413": "Error",
      "get /api/v1/wallet/overview 413": undefined,
      "get /api/v1/wallet/overview 503": "Error",
      "post /api/v1/ai-agents/chat/response 413": "AiError",
      "post /api/v1/ai-agents/chat/response 404": "AiError",
      "post /api/v1/ai-agents/match/predict 422": "AiError",
      "post /api/v1/ai-agents/support/chat 403": "AiError",
      "post /api/v1/payments/card-b/webhook 400": "Error",
      "get /api/v1/payments/card-b/redirect 400": "Error",
    };
    expect(Object.fromEntries(Object.keys(expected).map((k) => [k, shapes.get(k)]))).toEqual(expected);
  });
});
