import { describe, expect, it } from "vitest";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import type { TestIssuer } from "../support/issuer";
import { freePort } from "../support/process";
import { json, newUser } from "../support/users";

/**
 * One shape per layer (docs/api/errors.md): what the authentication and rate-limit layer says is
 * shape 1 on every route, AI routes included; what a route says is the route's shape (shape 2
 * under /api/v1/ai-agents). The AI health route answers its own report, like /health.
 */
const env = useTestEnvironment();

const BIO = "/api/v1/ai-agents/bio/rewrite";
const bioBody = { currentBio: "I like long walks on the beach.", style: "casual" };

const shape1 = (error: string, code: number) => ({ error, message: expect.any(String), code, requestId: expect.stringMatching(/^req_/) });
const shape2 = (code: string) => ({ success: false, error: { code, message: expect.any(String), details: expect.any(String), language: "en" }, timestamp: expect.any(String), requestId: expect.stringMatching(/^req_/) });

async function answer(t: TestApp, path: string, init: RequestInit): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await t.request(path, init);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("the authentication and rate-limit layer answers shape 1 on AI routes too", () => {
  it("503 when the identity provider cannot be reached", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: { ...env.issuer, url: `http://127.0.0.1:${await freePort()}` } as TestIssuer });
    const token = await env.issuer.sign({ sub: "shape-issuer-down" });
    for (const path of [BIO, "/api/v1/wallet/overview"]) {
      const init = path === BIO ? json(bioBody, { authorization: `Bearer ${token}` }) : { headers: { authorization: `Bearer ${token}` } };
      const { status, body } = await answer(t, path, init);
      expect(status, path).toBe(503);
      expect(body, path).toEqual(shape1("service_unavailable", 503));
    }
  });

  it("401 without a credential, with a malformed one and with an unknown API key", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const attempts: Record<string, string>[] = [{}, { authorization: "Bearer not-a-token" }, { authorization: `Bearer ${"a".repeat(64)}` }];
    for (const headers of attempts) {
      const { status, body } = await answer(t, BIO, json(bioBody, headers));
      expect(status).toBe(401);
      expect(body).toEqual(shape1("unauthorized", 401));
    }
  });

  it("429 once the AI quota is used up, while the route's own 503 before it was shape 2", async () => {
    // No inference host: every call is counted, then answered 503 by the route itself.
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const member = await newUser(env.issuer);
    for (let i = 0; i < 100; i++) {
      const { status, body } = await answer(t, BIO, json(bioBody, member.headers));
      expect(status).toBe(503);
      expect(body).toEqual(shape2("service_unavailable"));
    }
    const { status, body } = await answer(t, BIO, json(bioBody, member.headers));
    expect(status).toBe(429);
    expect(body).toEqual({ ...shape1("rate_limit_exceeded", 429), retry_after: expect.any(Number) });
  });
});

describe("what an AI route says is shape 2", () => {
  it("its validation, its admin check and an unknown path under the prefix", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const member = await newUser(env.issuer);
    expect(await answer(t, BIO, json({ ...bioBody, currentBio: "hi" }, member.headers))).toEqual({ status: 400, body: shape2("invalid_bio_length") });
    const forbidden = await answer(t, "/api/v1/ai-agents/context/stats", { headers: member.headers });
    expect(forbidden).toEqual({ status: 403, body: shape2("forbidden") });
    const unknown = await answer(t, "/api/v1/ai-agents/nothing-here", { headers: member.headers });
    expect(unknown).toEqual({ status: 404, body: shape2("not_found") });
  });
});

describe("GET /api/v1/ai-agents/health", () => {
  it("answers 503 with its own report when no inference host answers, as the document says", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, env: { INFERENCE_URL: `http://127.0.0.1:${await freePort()}` } });
    const { status, body } = await answer(t, "/api/v1/ai-agents/health", {});
    expect(status).toBe(503);
    expect(body).toEqual({ status: "down", hosts: [{ host: "host-1", reachable: false, coolingDown: expect.any(Boolean), servesModel: false, servesEmbedModel: null }], timestamp: expect.any(String) });

    const doc = (await (await t.request("/openapi.json")).json()) as { paths: Record<string, Record<string, { responses: Record<string, { content: { "application/json": { schema: unknown } } }> }>> };
    const schemaOf = (path: string, method: string, status: string) => doc.paths[path]?.[method]?.responses[status]?.content["application/json"].schema;
    expect(schemaOf("/api/v1/ai-agents/health", "get", "503")).toEqual({ $ref: "#/components/schemas/AiHealth" });
    // An AI route's 503 comes from either layer, and the document names both shapes.
    expect(JSON.stringify(schemaOf(BIO, "post", "503"))).toContain("#/components/schemas/AiError");
    expect(JSON.stringify(schemaOf(BIO, "post", "503"))).toContain("#/components/schemas/Error");
    expect(schemaOf(BIO, "post", "401")).toEqual({ $ref: "#/components/schemas/Error" });
    expect(schemaOf(BIO, "post", "429")).toEqual({ $ref: "#/components/schemas/Error" });
  });
});
