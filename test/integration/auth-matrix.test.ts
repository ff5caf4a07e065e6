import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPENAPI_PATH } from "../../src/app";
import { buildTestApp, type TestApp } from "../support/app";
import { authMatrix } from "../support/auth-matrix";
import { useTestEnvironment } from "../support/environment";
import { startFakeInference, type FakeInference } from "../support/fake-inference";
import { startFakeVoiceRuntime, type FakeVoiceRuntime } from "../support/fake-voice-runtime";
import { startFakePlatformAgent, type FakePlatformAgent } from "../support/fake-platform-agent";
import { useProviders } from "../support/payments";
import { ROUTES } from "../support/routes";

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
