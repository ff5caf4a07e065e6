import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { aiApp, expectAiError, fenceTag, member, ok, post } from "../support/ai";
import type { TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { startFakeInference, type FakeInference } from "../support/fake-inference";

const env = useTestEnvironment();
let host: FakeInference;
let t: TestApp;
beforeAll(async () => {
  host = await startFakeInference({ model: "qwen-test:7b" });
  t = aiApp(env, [host.url]);
});
afterAll(() => host.close());
beforeEach(() => host.reset());

interface Bio {
  headline: string;
  bio: string;
  prompts: string[];
  improvements: string[];
  confidence: number;
}
const answer = (bio: string) => ({ headline: "Trail lover", bio, prompts: ["Best trail you know?"], improvements: ["Clearer opening"], confidence: 0.8 });
const DETAILED = { currentBio: "I like hiking and bread.", interests: ["hiking", "sourdough"], targetAudience: "outdoorsy people", tone: "casual", maxLength: 120, language: "en" };

describe.each(["rewrite", "optimize"] as const)("POST /bio/%s", (mode) => {
  it("detailed form: the bio result with metadata, grounded in the stored profile", async () => {
    const me = await member(t, env.issuer);
    host.script(answer("Hiker by day, baker by night."));
    const body = await ok<Bio>(await post(t, me, `/bio/${mode}`, DETAILED));
    expect(body.data).toMatchObject(answer("Hiker by day, baker by night."));
    expect(body.data.metadata).toMatchObject({ model_version: "qwen-test:7b", tokens_used: 18, language: "en" });
    const [system, user] = host.chats()[0]?.messages ?? [];
    const tag = fenceTag(system?.content ?? "");
    expect(user?.content).toContain(`<${tag} name="current_bio">\nI like hiking and bread.\n</${tag}>`);
    expect(user?.content).toContain("hiking, sourdough");
    expect(user?.content).toContain("Weekend hiker and amateur baker");
    expect(user?.content).toContain("at most 120 characters");
    expect(system?.content).toContain(mode === "rewrite" ? "from scratch" : "keeping their core message");
  });

  it("short form: the stored profile's interests and no metadata", async () => {
    const me = await member(t, env.issuer);
    host.script(answer("Jazz, trails and fresh bread."));
    const body = await ok<Bio>(await post(t, me, `/bio/${mode}`, { currentBio: "I like hiking and bread.", style: "witty and warm" }));
    expect(body.data.metadata).toBeUndefined();
    const user = host.chats()[0]?.messages[1]?.content ?? "";
    expect(user).toContain("hiking, baking, jazz");
    expect(user).toMatch(/name="requested_style">\nwitty and warm\n/);
  });

  it("answers each endpoint code in shape 2", async () => {
    const me = await member(t, env.issuer);
    await expectAiError(await post(t, me, `/bio/${mode}`, { ...DETAILED, currentBio: "too short" }), 400, "invalid_bio_length");
    await expectAiError(await post(t, me, `/bio/${mode}`, { ...DETAILED, currentBio: "x".repeat(501) }), 400, "invalid_bio_length");
    await expectAiError(await post(t, me, `/bio/${mode}`, { currentBio: "short", style: "casual" }), 400, "invalid_bio_length");
    await expectAiError(await post(t, me, `/bio/${mode}`, { ...DETAILED, maxLength: 600 }), 400, "invalid_bio_length");
    await expectAiError(await post(t, me, `/bio/${mode}`, { ...DETAILED, interests: [] }), 400, "missing_interests");
    await expectAiError(await post(t, me, `/bio/${mode}`, { ...DETAILED, interests: undefined }), 400, "missing_interests");
    await expectAiError(await post(t, me, `/bio/${mode}`, { ...DETAILED, tone: "flirty" }), 400, "invalid_tone");
    await expectAiError(await post(t, me, `/bio/${mode}`, { ...DETAILED, language: "zz" }), 400, "invalid_language");
    await expectAiError(await post(t, me, `/bio/${mode}`, { ...DETAILED, tone: "rude", language: "de" }), 400, "invalid_tone", "de");
    expect(host.chats()).toHaveLength(0);
  });
});

describe("bio maxLength", () => {
  it("asks again once when the bio is too long and uses the answer that fits", async () => {
    const me = await member(t, env.issuer);
    host.script(answer("a".repeat(200)), answer("Short and sweet."));
    const body = await ok<Bio>(await post(t, me, "/bio/rewrite", { ...DETAILED, maxLength: 50 }));
    expect(body.data.bio).toBe("Short and sweet.");
    const chats = host.chats();
    expect(chats).toHaveLength(2);
    expect(chats[1]?.messages.at(-1)?.content).toContain("the limit is 50");
    expect(body.data.metadata?.tokens_used).toBe(36);
  });

  it("counts maxLength in characters: a bio of 114 characters with 100 emoji fits 150 and is not re-asked", async () => {
    const me = await member(t, env.issuer);
    const emoji = `Sunrise hikes ${"🌄".repeat(100)}`;
    expect(Array.from(emoji)).toHaveLength(114);
    host.script(answer(emoji));
    const body = await ok<Bio>(await post(t, me, "/bio/rewrite", { ...DETAILED, maxLength: 150 }));
    expect(body.data.bio).toBe(emoji);
    expect(host.chats()).toHaveLength(1);
  });

  it("cuts a bio still too long after the re-ask at a sentence boundary", async () => {
    const me = await member(t, env.issuer);
    const long = "I hike every weekend. I bake sourdough on Sundays. I never miss a jazz night in town.";
    host.script(answer(long), answer(long));
    const body = await ok<Bio>(await post(t, me, "/bio/optimize", { ...DETAILED, maxLength: 60 }));
    expect(body.data.bio).toBe("I hike every weekend. I bake sourdough on Sundays.");
    expect(host.chats()).toHaveLength(2);
  });

  it("cuts a host's endless answers at maxLength after one re-ask", async () => {
    const me = await member(t, env.issuer);
    host.setMode("too-long", { length: 3_000 });
    const body = await ok<Bio>(await post(t, me, "/bio/rewrite", { ...DETAILED, maxLength: 200 }));
    expect(body.data.bio.length).toBeLessThanOrEqual(200);
    expect(body.data.bio.endsWith(".")).toBe(true);
    expect(host.chats()).toHaveLength(2);
  });

  it("cuts at a word boundary when no sentence ends in time, never beyond maxLength", async () => {
    const me = await member(t, env.issuer);
    const long = "hiking baking jazz coffee travel music dancing reading cooking painting climbing swimming";
    host.script(answer(long), answer(long));
    const body = await ok<Bio>(await post(t, me, "/bio/rewrite", { ...DETAILED, maxLength: 30 }));
    expect(body.data.bio.length).toBeLessThanOrEqual(30);
    expect(long.startsWith(body.data.bio)).toBe(true);
    expect(long[body.data.bio.length]).toBe(" ");
  });
});
