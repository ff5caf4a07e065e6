import { describe, expect, it } from "vitest";
import { interestOverlap } from "../../src/services/ai/match";
import { isLanguage, LANGUAGE_CODES } from "../../src/services/ai/languages";
import { contentWords, cutToLength, normaliseInterest } from "../../src/services/ai/text";

describe("languages", () => {
  it("lists the 13 codes the spec shows first and at least 33 in all", () => {
    expect(LANGUAGE_CODES.slice(0, 13)).toEqual(["en", "es", "fr", "sw", "ar", "zh", "hi", "pt", "ru", "ja", "ko", "de", "it"]);
    expect(LANGUAGE_CODES.length).toBeGreaterThanOrEqual(33);
    expect(new Set(LANGUAGE_CODES).size).toBe(LANGUAGE_CODES.length);
    expect(isLanguage("toString")).toBe(false);
    expect(isLanguage("xx")).toBe(false);
  });
});

describe("interest normalisation", () => {
  it("compares case, punctuation and simple word forms as equal", () => {
    expect(normaliseInterest("Hiking!")).toBe(normaliseInterest("hikes"));
    expect(normaliseInterest("Swimming")).toBe(normaliseInterest("swim"));
    expect(normaliseInterest("Movies")).toBe(normaliseInterest("movie"));
    expect(normaliseInterest("parties")).toBe(normaliseInterest("party"));
    expect(normaliseInterest("Board games")).toBe(normaliseInterest("board game"));
    expect(normaliseInterest("jazz")).not.toBe(normaliseInterest("jam"));
  });

  it("computes the overlap in the caller's spelling", () => {
    expect(interestOverlap(["Hiking", "Jazz", "Chess"], ["jazz", "hikes"])).toEqual({ common: ["Hiking", "Jazz"], score: 0.5 * (2 / 3) + 0.5 * 1 });
    expect(interestOverlap(["opera"], ["football"])).toEqual({ common: [], score: 0 });
  });

  it("finds the meaningful words of a text", () => {
    expect([...contentWords("I love hiking and the jazz, and I'm looking for someone!").values()]).toEqual(["hiking", "jazz"]);
  });
});

describe("cutToLength", () => {
  it("leaves a short text alone", () => {
    expect(cutToLength("  Hello.  ", 10)).toBe("Hello.");
  });
  it("prefers a sentence end, then a word boundary, then a hard cut", () => {
    expect(cutToLength("One two three. Four five six seven.", 20)).toBe("One two three.");
    // A sentence end in the first half would waste too much: the word boundary wins.
    expect(cutToLength("One. Two three four five six.", 20)).toBe("One. Two three four");
    expect(cutToLength("alpha beta gamma delta epsilon", 20)).toBe("alpha beta gamma");
    expect(cutToLength("a".repeat(50), 10)).toBe("a".repeat(10));
  });
  it("counts characters, not UTF-16 units: an emoji is one, as in the request's validation", () => {
    expect(cutToLength("😀".repeat(20), 9)).toBe("😀".repeat(9));
    expect(cutToLength("😀".repeat(9), 9)).toBe("😀".repeat(9));
    // 60 emoji, a sentence end, then more: the sentence end at character 61 of 70 is kept.
    const text = `${"😀".repeat(60)}. ${"😎".repeat(20)}`;
    expect(cutToLength(text, 70)).toBe(`${"😀".repeat(60)}.`);
    expect(cutToLength(`${"🌍".repeat(40)} ${"🌙".repeat(40)}`, 60)).toBe("🌍".repeat(40));
  });
});
