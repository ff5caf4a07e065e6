import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { basePrice } from "../../src/services/ai/pricing";
import { aiApp, expectAiError, member, ok, post, PROFILE } from "../support/ai";
import type { TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { startFakeInference, type FakeInference } from "../support/fake-inference";

const env = useTestEnvironment();
let host: FakeInference;
let t: TestApp;
beforeAll(async () => {
  host = await startFakeInference({ model: "mistral-test:7b" });
  t = aiApp(env, [host.url], { INFERENCE_API: "openai" });
});
afterAll(() => host.close());
beforeEach(() => host.reset());

interface Prediction {
  matchScore: number;
  reasoning: string;
  commonInterests: string[];
  confidence: number;
}

const DETAILED = {
  userProfile: "I hike most weekends, bake sourdough and never miss live jazz in town.",
  potentialMatchProfile: "Climber and jazz pianist who likes long hikes and good bread.",
  userInterests: ["Hiking", "Jazz", "Baking", "Chess"],
  matchInterests: ["hikes", "jazz!", "climbing"],
  location: "Nairobi, Kenya",
  language: "fr",
};

describe("POST /match/predict", () => {
  it("detailed form: our computed overlap and score, the model's reasoning and bounded nudge", async () => {
    const me = await member(t, env.issuer);
    host.script({ reasoning: "Ils partagent la randonnée et le jazz.", adjustment: 0.9, confidence: 0.7 });
    const body = await ok<Prediction>(await post(t, me, "/match/predict", DETAILED));
    expect(body.data.commonInterests).toEqual(["Hiking", "Jazz"]);
    expect(body.data.reasoning).toBe("Ils partagent la randonnée et le jazz.");
    // interests: 0.5·(2/5) + 0.5·(2/3); location: the caller's city matches; wishes unknown (0.5).
    const backbone = 0.6 * (0.5 * (2 / 5) + 0.5 * (2 / 3)) + 0.2 * 1 + 0.2 * 0.5;
    expect(body.data.matchScore).toBeCloseTo(Math.round((backbone + 0.15) * 100) / 100, 2);
    expect(body.data.confidence).toBeGreaterThan(0);
    expect(body.data.confidence).toBeLessThanOrEqual(1);
    expect(body.data.metadata).toMatchObject({ model_version: "mistral-test:7b", language: "fr", tokens_used: 18 });
    const [system, user] = host.chats()[0]?.messages ?? [];
    expect(system?.content).toContain("French");
    expect(user?.content).toContain(`computed score is ${Math.round(backbone * 100) / 100}`);
  });

  it("keeps the score within 0..1 whatever the model says", async () => {
    const me = await member(t, env.issuer);
    host.script({ reasoning: "No overlap at all.", adjustment: -1, confidence: 0.2 });
    const body = await ok<Prediction>(
      await post(t, me, "/match/predict", { ...DETAILED, userInterests: ["opera"], matchInterests: ["football"], location: "Lima, Peru" }),
    );
    expect(body.data.commonInterests).toEqual([]);
    expect(body.data.matchScore).toBeGreaterThanOrEqual(0);
    expect(body.data.matchScore).toBeLessThanOrEqual(1);
    expect(body.data.matchScore).toBeCloseTo(0.2 * 0.3 + 0.2 * 0.5 - 0.15, 2);
  });

  it("counts both sides' stated wishes when the other member is visible", async () => {
    const me = await member(t, env.issuer);
    const him = await member(t, env.issuer, { ...PROFILE, displayName: "Baraka", gender: "man", interestedIn: ["woman"], birthDate: "1990-01-01" });
    host.respond(() => ({ reasoning: "ok", adjustment: 0, confidence: 0.5 }));
    const without = await ok<Prediction>(await post(t, me, "/match/predict", DETAILED));
    const withWishes = await ok<Prediction>(await post(t, me, "/match/predict", { ...DETAILED, matchUserId: him.id }));
    expect(withWishes.data.matchScore).toBeCloseTo(without.data.matchScore + 0.2 * 0.5, 2);
    const nobody = await ok<Prediction>(await post(t, me, "/match/predict", { ...DETAILED, matchUserId: "usr_00000000000000000000000000" }));
    expect(nobody.data.matchScore).toBe(without.data.matchScore);
  });

  it("short form: common words of the two texts, no metadata", async () => {
    const me = await member(t, env.issuer);
    const body = await ok<Prediction>(
      await post(t, me, "/match/predict", { user1Profile: "Loves hiking, coffee and jazz concerts.", user2Profile: "Jazz fan who goes hiking every weekend." }),
    );
    expect(body.data.commonInterests.sort()).toEqual(["hiking", "jazz"]);
    expect(body.data.metadata).toBeUndefined();
  });

  it("answers each endpoint code in shape 2", async () => {
    const me = await member(t, env.issuer);
    await expectAiError(await post(t, me, "/match/predict", { ...DETAILED, userProfile: "short" }), 400, "invalid_profile", "fr");
    await expectAiError(await post(t, me, "/match/predict", { ...DETAILED, potentialMatchProfile: undefined }), 400, "invalid_profile", "fr");
    await expectAiError(await post(t, me, "/match/predict", { user1Profile: "tiny", user2Profile: DETAILED.potentialMatchProfile }), 400, "invalid_profile");
    await expectAiError(await post(t, me, "/match/predict", { ...DETAILED, userInterests: [] }), 400, "missing_interests", "fr");
    await expectAiError(await post(t, me, "/match/predict", { ...DETAILED, matchInterests: undefined }), 400, "missing_interests", "fr");
    await expectAiError(await post(t, me, "/match/predict", { ...DETAILED, language: "xx" }), 400, "invalid_language");
    await expectAiError(await post(t, me, "/match/predict", { ...DETAILED, userProfile: "aaaa aaaa aaaa aaaa aaaa aaaa" }), 422, "insufficient_data", "fr");
    expect(host.chats()).toHaveLength(0);
  });
});

interface Price {
  experienceType: string;
  currency: string;
  basePrice: number;
  finalPrice: number;
  adjustment: number;
  reasoning: string;
  confidence: number;
}

describe("POST /experiences/pricing", () => {
  it("prices from our table and applies the model's bounded adjustment", async () => {
    const me = await member(t, env.issuer);
    host.script({ adjustment: 0.5, reasoning: "Premium venue.", confidence: 0.9 });
    const input = { experienceType: "Wine tasting", location: "Paris, France", duration: "2h", amenities: ["sommelier", "cheese"], language: "en" };
    const body = await ok<Price>(await post(t, me, "/experiences/pricing", input));
    const base = basePrice({ experienceType: "Wine tasting", location: "Paris, France", durationMinutes: 120, amenities: ["sommelier", "cheese"] });
    expect(base.level).toBe("high");
    expect(body.data).toMatchObject({ experienceType: "wine_tasting", currency: "usd", basePrice: base.price, adjustment: 0.2, reasoning: "Premium venue.", confidence: 0.9 });
    expect(body.data.finalPrice).toBe(Math.round((base.price * 1.2) / 50) * 50);
    expect(body.data.metadata?.model_version).toBe("mistral-test:7b");
  });

  it("prices lower where costs are lower and longer bookings less per hour", () => {
    const nairobi = basePrice({ experienceType: "dinner", location: "Nairobi", durationMinutes: 120, amenities: [] });
    const london = basePrice({ experienceType: "dinner", location: "London", durationMinutes: 120, amenities: [] });
    const long = basePrice({ experienceType: "dinner", location: "London", durationMinutes: 240, amenities: [] });
    expect(nairobi.price).toBeLessThan(london.price);
    expect(long.price).toBeLessThan(2 * london.price);
    expect(basePrice({ experienceType: "skydiving", location: "x", durationMinutes: 60, amenities: [] }).type).toBe("other");
  });

  it("answers invalid_input and invalid_language in shape 2", async () => {
    const me = await member(t, env.issuer);
    const input = { experienceType: "dinner", location: "Nairobi", duration: 90 };
    await expectAiError(await post(t, me, "/experiences/pricing", { ...input, duration: 5 }), 400, "invalid_input");
    await expectAiError(await post(t, me, "/experiences/pricing", { ...input, duration: "forever" }), 400, "invalid_input");
    await expectAiError(await post(t, me, "/experiences/pricing", { ...input, experienceType: "" }), 400, "invalid_input");
    await expectAiError(await post(t, me, "/experiences/pricing", { ...input, language: "qq" }), 400, "invalid_language");
    expect(host.chats()).toHaveLength(0);
  });
});
