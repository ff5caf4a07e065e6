import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AI, aiApp, expectAiError, fenceTag, member, ok, post } from "../support/ai";
import { useTestEnvironment } from "../support/environment";
import { expectError } from "../support/errors";
import { startFakeInference, type FakeInference } from "../support/fake-inference";
import type { TestApp } from "../support/app";

const env = useTestEnvironment();
let host: FakeInference;
beforeAll(async () => {
  host = await startFakeInference({ model: "llama-test:8b" });
});
afterAll(() => host.close());
beforeEach(() => host.reset());

const ANSWER = { response: "That sounds lovely! Which trail?", suggestions: ["Ask about the trail"], nextSteps: ["Suggest a weekend hike"] };
interface Chat {
  response: string;
  suggestions: string[];
  tone: string;
  nextSteps: string[];
}

describe.each(["ollama", "openai"] as const)("POST /chat/response (%s)", (api) => {
  let t: TestApp;
  beforeAll(() => {
    t = aiApp(env, [host.url], { INFERENCE_API: api });
  });

  it("short form: the envelope with the chat result, no metadata", async () => {
    const me = await member(t, env.issuer);
    host.script(ANSWER);
    const body = await ok<Chat>(await post(t, me, "/chat/response", { message: "I went hiking today!", userId: me.id }));
    expect(body.data).toEqual({ ...ANSWER, tone: "friendly" });
    const [call] = host.chats();
    expect(call?.api).toBe(api);
    expect(call?.schema).toMatchObject({ type: "object", required: expect.arrayContaining(["response", "suggestions", "nextSteps"]) });
    const [system, user] = call?.messages ?? [];
    const tag = fenceTag(system?.content ?? "");
    expect(user?.content).toContain(`<${tag} name="latest_message">\nI went hiking today!\n</${tag}>`);
    // The caller's own stored profile is part of the context.
    expect(user?.content).toMatch(new RegExp(`<${tag} name="member_profile">[\\s\\S]*interests: hiking, baking, jazz[\\s\\S]*</${tag}>`));
    expect(system?.content).toContain("English");
  });

  it("detailed form: metadata with the host's model and tokens, the requested tone and language", async () => {
    const me = await member(t, env.issuer);
    host.script(ANSWER);
    const res = await post(t, me, "/chat/response", {
      message: "¿Te gusta el jazz?",
      userId: me.id,
      context: ["Hola!", "¿Qué tal tu semana?"],
      tone: "flirty",
      language: "es",
    });
    const body = await ok<Chat>(res);
    expect(body.data).toMatchObject({ ...ANSWER, tone: "flirty" });
    expect(body.data.metadata).toEqual({ model_version: "llama-test:8b", processing_time: expect.any(Number), tokens_used: 18, language: "es" });
    expect(Number.isInteger(body.data.metadata?.processing_time)).toBe(true);
    const [system, user] = host.chats()[0]?.messages ?? [];
    expect(system?.content).toContain("Spanish");
    expect(user?.content).toContain("flirty");
    expect(user?.content).toContain("¿Qué tal tu semana?");
  });
});

describe("POST /chat/response", () => {
  let t: TestApp;
  beforeAll(() => {
    t = aiApp(env, [host.url]);
  });

  it("remembers the conversation between calls", async () => {
    const me = await member(t, env.issuer);
    await ok(await post(t, me, "/chat/response", { message: "First message here", userId: me.id, context: ["line one"], tone: "casual", language: "en" }));
    await ok(await post(t, me, "/chat/response", { message: "Second message here", userId: me.id }));
    const second = host.chats()[1]?.messages[1]?.content ?? "";
    expect(second).toContain("line one");
    expect(second).toContain("First message here");
  });

  it("uses a profile edit on the next call, and still remembers the conversation", async () => {
    const me = await member(t, env.issuer);
    await ok(await post(t, me, "/chat/response", { message: "First message here", userId: me.id, context: ["line one"], tone: "casual", language: "en" }));
    const edit = await t.request("/api/v1/profile", { method: "PUT", headers: { ...me.headers, "content-type": "application/json" }, body: JSON.stringify({ bio: "I restore old bicycles every weekend." }) });
    expect(edit.status, await edit.clone().text()).toBe(200);
    await ok(await post(t, me, "/chat/response", { message: "Second message here", userId: me.id }));
    const second = host.chats()[1]?.messages[1]?.content ?? "";
    expect(second).toContain("I restore old bicycles every weekend.");
    expect(second).toContain("First message here");
  });

  it("works for a member without a profile yet", async () => {
    const me = await member(t, env.issuer, null);
    await ok(await post(t, me, "/chat/response", { message: "Hello, anyone?", userId: me.id }));
    expect(host.chats()[0]?.messages[1]?.content).toContain("(no profile yet)");
  });

  it("answers each endpoint code in shape 2", async () => {
    const me = await member(t, env.issuer);
    const base = { message: "Hello there", userId: me.id, context: ["hi"], tone: "casual", language: "en" };
    await expectAiError(await post(t, me, "/chat/response", { ...base, message: "hey" }), 400, "invalid_message");
    await expectAiError(await post(t, me, "/chat/response", { message: "hey", userId: me.id }), 400, "invalid_message");
    await expectAiError(await post(t, me, "/chat/response", { ...base, message: undefined }), 400, "invalid_message");
    await expectAiError(await post(t, me, "/chat/response", { ...base, context: [] }), 400, "missing_context");
    await expectAiError(await post(t, me, "/chat/response", { ...base, context: undefined }), 400, "missing_context");
    await expectAiError(await post(t, me, "/chat/response", { ...base, tone: "sarcastic" }), 400, "invalid_tone");
    await expectAiError(await post(t, me, "/chat/response", { ...base, tone: undefined, context: ["x"] }), 400, "invalid_tone");
    await expectAiError(await post(t, me, "/chat/response", { ...base, language: "xx" }), 400, "invalid_language");
    await expectAiError(await post(t, me, "/chat/response", { message: "Hello there", userId: me.id, language: "klingon" }), 400, "invalid_language");
    expect(host.chats()).toHaveLength(0);
  });

  it("echoes the request's language in errors and accepts codes in any case", async () => {
    const me = await member(t, env.issuer);
    await expectAiError(await post(t, me, "/chat/response", { message: "hey", userId: me.id, language: "FR" }), 400, "invalid_message", "fr");
    await ok(await post(t, me, "/chat/response", { message: "Bonjour à toi", userId: me.id, language: "FR" }));
  });

  it("rejects unknown fields, wrong types and malformed JSON as invalid_input", async () => {
    const me = await member(t, env.issuer);
    const e1 = await expectAiError(await post(t, me, "/chat/response", { message: "Hello there", userId: me.id, extra: 1 }), 400, "invalid_input");
    expect(e1.error.details).toContain("extra");
    await expectAiError(await post(t, me, "/chat/response", ["not", "an", "object"]), 400, "invalid_input");
    const res = await t.request(`${AI}/chat/response`, { method: "POST", headers: { ...me.headers, "content-type": "application/json" }, body: "{nope" });
    await expectAiError(res, 400, "invalid_input");
  });

  it("never acts on another user's context: a foreign userId is 404", async () => {
    const me = await member(t, env.issuer);
    const other = await member(t, env.issuer);
    await expectAiError(await post(t, me, "/chat/response", { message: "Hello there", userId: other.id }), 404, "not_found");
    expect(host.chats()).toHaveLength(0);
  });

  it("keeps shape 1 for authentication failures", async () => {
    const res = await t.request(`${AI}/chat/response`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    await expectError(res, 401, "unauthorized");
  });

  it("answers the checks every route shares in shape 2: a body that is not JSON, one too large, an unknown path", async () => {
    const me = await member(t, env.issuer);
    const form = await t.request(`${AI}/chat/response`, { method: "POST", headers: { ...me.headers, "content-type": "text/plain" }, body: "Hello there" });
    expect((await expectAiError(form, 400, "invalid_input")).error.details).toContain("content-type");
    const huge = JSON.stringify({ message: "x".repeat(1024 * 1024), userId: me.id });
    await expectAiError(await t.request(`${AI}/chat/response`, { method: "POST", headers: { ...me.headers, "content-type": "application/json" }, body: huge }), 413, "payload_too_large");
    await expectAiError(await t.request(`${AI}/chat/nowhere`, { headers: me.headers }), 404, "not_found");
    // Only under the prefix: a path that merely starts with the same letters is another route.
    await expectError(await t.request(`${AI}x/chat`, { headers: me.headers }), 404, "not_found");
    expect(host.chats()).toHaveLength(0);
  });

  it("answers 503 service_unavailable when the host is down, 500 internal_error when answers stay invalid", async () => {
    const me = await member(t, env.issuer);
    host.setMode("down");
    const down = await expectAiError(await post(t, me, "/chat/response", { message: "Hello there", userId: me.id, language: "sw" }), 503, "service_unavailable", "sw");
    expect(JSON.stringify(down)).not.toContain(host.url);
    host.setMode("garbage");
    const bad = await expectAiError(await post(t, me, "/chat/response", { message: "Hello there", userId: me.id }), 500, "internal_error");
    expect(bad.error.message).toBe("internal error");
    expect(bad.error.details).toBe("");
    // The log, not the client, learns what was wrong.
    await expect.poll(() => t.logs.some((l) => l.msg === "request failed" && JSON.stringify(l).includes("stayed invalid")), { timeout: 5_000 }).toBe(true);
    expect(host.chats().filter((c) => c.body?.messages)).toHaveLength(3);
  });

  it("cuts a rambling answer to its limits instead of failing", async () => {
    const me = await member(t, env.issuer);
    host.setMode("too-long", { length: 5_000 });
    const body = await ok<Chat>(await post(t, me, "/chat/response", { message: "Hello there", userId: me.id }));
    expect(body.data.response.length).toBeLessThanOrEqual(2000);
    expect(body.data.suggestions.every((s) => s.length <= 300)).toBe(true);
  });

  it("answers 503 when no inference host is configured", async () => {
    const bare = aiApp(env, []);
    const me = await member(bare, env.issuer);
    await expectAiError(await post(bare, me, "/chat/response", { message: "Hello there", userId: me.id }), 503, "service_unavailable");
  });
});
