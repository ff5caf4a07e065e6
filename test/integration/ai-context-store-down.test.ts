import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisStore } from "../../src/node/kv-redis";
import type { TestApp } from "../support/app";
import { aiApp, expectAiError, member, ok, post, AI } from "../support/ai";
import { useTestEnvironment } from "../support/environment";
import { startFakeInference, type FakeInference } from "../support/fake-inference";

const env = useTestEnvironment();
let host: FakeInference;
// A Redis nobody listens on: every store call fails, as when the store is down.
const dead = createRedisStore({ url: "redis://127.0.0.1:1" });
let t: TestApp;
beforeAll(async () => {
  host = await startFakeInference({ model: "llama-test:8b" });
  t = aiApp(env, [host.url], {}, dead);
});
afterAll(async () => {
  await host.close();
  await dead.close();
});

describe("the AI context cache with its store down", () => {
  it("answers a chat from the database's profile, and logs that it served without the cache", async () => {
    const me = await member(t, env.issuer);
    host.script({ response: "Sounds fun!", suggestions: [], nextSteps: [] });
    const body = await ok<{ response: string }>(await post(t, me, "/chat/response", { message: "I went hiking today!", userId: me.id }));
    expect(body.data.response).toBe("Sounds fun!");
    // The profile still reached the prompt, read from the database.
    expect(host.chats()[0]?.messages[1]?.content).toContain("interests: hiking, baking, jazz");
    const warnings = t.logs.filter((l) => l.msg === "AI context cache unavailable; serving without it").map((l) => l.what);
    expect(warnings).toEqual(expect.arrayContaining(["read", "remember"]));
  });

  it("answers 503 on the cache's admin routes instead of 500", async () => {
    const admin = await member(t, env.issuer, null, { admin: true });
    await expectAiError(await t.request(`${AI}/context/stats`, { headers: admin.headers }), 503, "service_unavailable");
    await expectAiError(await t.request(`${AI}/context/invalidate/${admin.id}`, { method: "POST", headers: admin.headers }), 503, "service_unavailable");
  });
});
