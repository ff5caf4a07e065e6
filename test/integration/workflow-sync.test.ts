import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { startFakeN8n } from "../support/fake-n8n";
import { newUser } from "../support/users";
import { saveWorkflow } from "../support/workflows";

const env = useTestEnvironment();
const KEY = "n8n-test-key-0123456789";
let n8n: Awaited<ReturnType<typeof startFakeN8n>>;
beforeAll(async () => void (n8n = await startFakeN8n(KEY)));
afterAll(async () => n8n.close());

const configured = (apiKey = KEY) => ({ N8N_URL: n8n.url, N8N_API_KEY: apiKey, MESSAGING_GATEWAY_URL: "https://gateway.example", MESSAGING_EMAIL_FROM: "hi@example.com" });

describe("POST /api/v1/messaging/workflows/{workflowId}/sync", () => {
  it("creates, activates, and on repeat replaces the same engine workflow", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, env: configured() });
    const admin = await newUser(env.issuer, { admin: true });
    const saved = await saveWorkflow(t, admin);
    const path = `/api/v1/messaging/workflows/${saved.workflowId}/sync`;
    const first = await t.request(path, { method: "POST", headers: admin.headers });
    expect(first.status, await first.clone().text()).toBe(200);
    const body = (await first.json()) as { engineWorkflowId: string; syncedVersion: number; compiled: unknown };
    expect(body.syncedVersion).toBe(1);
    expect(n8n.workflows.get(body.engineWorkflowId)).toEqual({ body: body.compiled, active: true });
    const again = await t.request(path, { method: "POST", headers: admin.headers });
    expect(again.status).toBe(200);
    expect(((await again.json()) as { engineWorkflowId: string }).engineWorkflowId).toBe(body.engineWorkflowId);
    expect(n8n.calls.filter((c) => c.includes(body.engineWorkflowId)).map((c) => c.split(" ")[0])).toEqual(["POST", "PUT", "POST"]);
  });

  it("answers 502 with the engine's message, 503 without an engine, 404 for an unknown id", async () => {
    const admin = await newUser(env.issuer, { admin: true });
    const wrongKey = buildTestApp({ database: env.db.database, issuer: env.issuer, env: configured("wrong-key-0123456789") });
    const saved = await saveWorkflow(wrongKey, admin);
    const res = await wrongKey.request(`/api/v1/messaging/workflows/${saved.workflowId}/sync`, { method: "POST", headers: admin.headers });
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ error: "provider_error", details: [{ path: "engine", message: expect.stringContaining("unauthorized") }] });

    const bare = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const un = await bare.request(`/api/v1/messaging/workflows/${saved.workflowId}/sync`, { method: "POST", headers: admin.headers });
    expect(un.status).toBe(503);
    expect(((await un.json()) as { message: string }).message).toMatch(/automation engine/);
    expect((await bare.request(`/api/v1/messaging/workflows/wfl_none/sync`, { method: "POST", headers: admin.headers })).status).toBe(404);
    const member = await newUser(env.issuer);
    expect((await bare.request(`/api/v1/messaging/workflows/${saved.workflowId}/sync`, { method: "POST", headers: member.headers })).status).toBe(403);
  });
});
