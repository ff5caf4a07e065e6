import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { expectError } from "../support/errors";
import { startFakeInference, type FakeInference } from "../support/fake-inference";
import { ENTERPRISE, signIn } from "../support/people";

const env = useTestEnvironment();
let up: FakeInference;
let down: FakeInference;
beforeAll(async () => {
  [up, down] = await Promise.all([startFakeInference({ model: "up:7b", models: ["spare:1b"] }), startFakeInference({ mode: "down" })]);
});
afterAll(async () => {
  await Promise.all([up.close(), down.close()]);
});

function app(env2: Record<string, string> = {}): TestApp {
  return buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, env: { AGENTS_HOST: "agents.example.com", INFERENCE_URL: up.url, ...env2 } });
}

describe("the agents host", () => {
  it("serves the AI routes under /api/v1/ai-agents", async () => {
    const res = await app().request("http://agents.example.com/api/v1/ai-agents/health");
    expect(res.status).toBe(200);
  });

  it("answers 404 for every other path, even with a valid token", async () => {
    const t = app();
    const user = await signIn(t, env.issuer);
    for (const path of ["/health", "/api/v1/wallet/overview", "/openapi.json", "/api/v1/ai-agentsx", "/v1/auth/test"]) {
      const res = await t.request(`http://agents.example.com${path}`, { headers: user.headers });
      await expectError(res, 404, "not_found");
    }
  });

  it("matches the Host header whatever its case or port", async () => {
    const t = app();
    for (const host of ["AGENTS.example.com", "agents.example.com:8443"]) {
      const res = await t.request("/health", { headers: { host } });
      expect(res.status, host).toBe(404);
    }
  });

  it("leaves the base host unrestricted", async () => {
    const t = app();
    expect((await t.request("http://api.example.com/health")).status).toBe(200);
    expect((await t.request("http://api.example.com/api/v1/ai-agents/health")).status).toBe(200);
  });
});

describe("GET /api/v1/ai-agents/health", () => {
  it("reports each host's status only: no addresses, model names or timings", async () => {
    for (const api of ["ollama", "openai"]) {
      const res = await app({ INFERENCE_URL: `${up.url},${down.url}`, INFERENCE_API: api, INFERENCE_MODEL: "up:7b" }).request("/api/v1/ai-agents/health");
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toEqual({
        status: "degraded",
        hosts: [
          { host: "host-1", reachable: true, coolingDown: false, servesModel: true, servesEmbedModel: null },
          { host: "host-2", reachable: false, coolingDown: false, servesModel: false, servesEmbedModel: null },
        ],
        timestamp: expect.any(String),
      });
      for (const secret of ["127.0.0.1", "up:7b", "spare:1b", api]) expect(JSON.stringify(body)).not.toContain(secret);
    }
  });

  it("says whether each host serves the chat and the embedding model", async () => {
    const withEmbed = await app({ INFERENCE_URL: `${up.url},${down.url}`, INFERENCE_MODEL: "up:7b", INFERENCE_EMBED_MODEL: "embed" }).request("/api/v1/ai-agents/health");
    expect(await withEmbed.json()).toMatchObject({
      hosts: [
        { host: "host-1", servesModel: true, servesEmbedModel: false },
        { host: "host-2", servesModel: false, servesEmbedModel: false },
      ],
    });
    // An untagged name matches Ollama's ':latest'; without an embedding model there is nothing to report.
    const spare = await app({ INFERENCE_URL: up.url, INFERENCE_MODEL: "spare:1b" }).request("/api/v1/ai-agents/health");
    expect(await spare.json()).toMatchObject({ hosts: [{ servesModel: true, servesEmbedModel: null }] });
    const latest = await startFakeInference({ model: "platform-chat:latest" });
    try {
      const res = await app({ INFERENCE_URL: latest.url, INFERENCE_MODEL: "platform-chat" }).request("/api/v1/ai-agents/health");
      expect(await res.json()).toMatchObject({ hosts: [{ servesModel: true }] });
    } finally {
      await latest.close();
    }
  });

  it("reuses a probe for a few seconds, so the public route cannot flood the hosts", async () => {
    const t = app({ INFERENCE_URL: up.url });
    up.reset();
    await Promise.all(Array.from({ length: 5 }, () => t.request("/api/v1/ai-agents/health")));
    expect(up.received.filter((r) => r.path === "/api/tags")).toHaveLength(1);
  });

  it("answers 503 when no host answers or none is configured", async () => {
    const res = await app({ INFERENCE_URL: down.url }).request("/api/v1/ai-agents/health");
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: "down" });
    const none = await buildTestApp({ database: env.db.database }).request("/api/v1/ai-agents/health");
    expect(none.status).toBe(503);
  });
});
