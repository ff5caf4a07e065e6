import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPENAPI_PATH } from "../../src/app";
import { buildTestApp, type TestApp } from "../support/app";
import { authMatrix } from "../support/auth-matrix";
import { useTestEnvironment } from "../support/environment";
import { startFakeInference, type FakeInference } from "../support/fake-inference";
import { startFakeVoiceRuntime, type FakeVoiceRuntime } from "../support/fake-voice-runtime";
import { startFakePlatformAgent, type FakePlatformAgent } from "../support/fake-platform-agent";
import { useProviders } from "../support/payments";
import { ROUTES, concretePath } from "../support/routes";
import { json, newUser } from "../support/users";

const env = useTestEnvironment();
// Every outside party is a loopback fake speaking its protocol, so a route that calls one succeeds.
const providers = useProviders();
const VOICE_SECRET = "voice-runtime-secret-of-the-auth-matrix";
let inference: FakeInference;
let voice: FakeVoiceRuntime;
let agent: FakePlatformAgent;
let t: TestApp;

const build = () =>
  buildTestApp({
    database: env.db.database,
    issuer: env.issuer,
    env: {
      OBSERVABILITY_TOKEN: "observability-secret-for-tests",
      ...providers.current.env,
      INFERENCE_URL: inference.url,
      INFERENCE_MODEL: "fake-model:1b",
      VOICE_RUNTIME_URL: voice.url,
      VOICE_RUNTIME_SECRET: VOICE_SECRET,
      PLATFORM_AGENT_URL: agent.url,
    },
  });

beforeAll(async () => {
  [inference, voice, agent] = await Promise.all([startFakeInference(), startFakeVoiceRuntime(VOICE_SECRET), startFakePlatformAgent()]);
  t = build();
});

afterAll(async () => {
  await Promise.all([inference?.close(), voice?.close(), agent?.close()]);
});

describe("route list", () => {
  it("names every route the app registers, and nothing else", () => {
    const registered = t.app.routes
      .filter((r) => r.method !== "ALL" && r.path !== OPENAPI_PATH)
      .map((r) => `${r.method} ${r.path.replace(/:(\w+)(\{[^}]*\})?/g, "{$1}")}`);
    const listed = ROUTES.map((r) => `${r.method} ${r.template}`);
    expect([...new Set(registered)].sort()).toEqual([...listed].sort());
  });

  it("expects a 2xx or a 4xx of every route, never a 5xx", () => {
    expect(ROUTES.filter((r) => r.expect >= 500 || (r.apiKey ?? 0) >= 500).map((r) => `${r.method} ${r.template}`)).toEqual([]);
  });
});

describe.each(ROUTES)("$method $template ($access)", (route) => {
  authMatrix({ app: () => t, freshApp: build, issuer: () => env.issuer }, route);
});

describe("a deleted account", () => {
  it("answers every route 403 account_deleted to the member's token and to their API keys, on every instance, except the restore", async () => {
    const admin = await newUser(env.issuer, { admin: true });
    const made = await t.request("/api/v1/admin/api-keys", json({ name: "matrix" }, admin.headers));
    expect(made.status).toBe(201);
    const { key } = (await made.json()) as { key: string };
    expect((await t.request("/api/v1/account", { ...json({ confirm: "DELETE" }, admin.headers), method: "DELETE" })).status).toBe(200);
    const restore = "/api/v1/account/restore";
    const credentials = { token: admin.headers, "API key": { authorization: `Bearer ${key}` } };
    const wrong: string[] = [];
    // A second instance sharing the store, as another server or isolate would.
    const elsewhere = buildTestApp({ database: env.db.database, issuer: env.issuer, kv: t.deps.kv });
    for (const route of ROUTES) {
      if (!["user", "admin", "ai"].includes(route.access) || route.template === restore) continue;
      for (const [name, headers] of Object.entries(credentials)) {
        const init: RequestInit = { method: route.method, headers: route.body === undefined ? headers : { ...headers, "content-type": "application/json" } };
        if (route.body !== undefined) init.body = JSON.stringify(route.body);
        for (const app of [t, elsewhere]) {
          const res = await app.app.request(concretePath(route), init);
          const body = (await res.json().catch(() => ({}))) as { error?: unknown; code?: unknown };
          if (res.status !== 403 || body.error !== "account_deleted" || body.code !== 403) wrong.push(`${route.method} ${route.template} (${name}): ${res.status} ${String(body.error)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    const byKey = await t.request(restore, { method: "POST", headers: credentials["API key"] });
    expect(byKey.status).toBe(403);
    expect((await t.request(restore, { method: "POST", headers: admin.headers })).status).toBe(200);
    expect((await t.request("/v1/auth/test", { headers: credentials["API key"] })).status).toBe(200);
  });
});
