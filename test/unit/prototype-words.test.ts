import { describe, expect, it } from "vitest";
import { basePrice, typeKey } from "../../src/services/ai/pricing";
import { htmlToText } from "../../src/services/kb/html";
import { buildIndex } from "../../src/services/kb/retrieval";
import { splitSections } from "../../src/services/kb/sections";
import { expandQuery, processTerm, stem } from "../../src/services/kb/terms";

/** Words that name a built-in of every object: a lookup table that is a plain object finds them. */
const BUILT_INS = [...Object.getOwnPropertyNames(Object.prototype), "__proto__", "prototype"];

describe("ordinary words that name an object's built-ins", () => {
  it.each(BUILT_INS)("'%s' is a word like any other in KB terms", (word) => {
    expect(typeof stem(word.toLowerCase())).toBe("string");
    expect(processTerm(word)).toSatisfy((t: unknown) => t === null || typeof t === "string");
    expect(expandQuery(word)).toBe(word);
  });

  it.each(BUILT_INS)("'%s' is an unknown experience type, priced as 'other'", (word) => {
    expect(typeKey(word)).toBe("other");
    const base = basePrice({ experienceType: word, location: "Paris", durationMinutes: 60, amenities: [] });
    expect(base).toMatchObject({ type: "other", hourlyRate: 3000 });
    expect(Number.isInteger(base.price)).toBe(true);
  });

  it("'&constructor;' in HTML stays as written", () => {
    expect(htmlToText("<p>a &constructor; b &toString; c &amp; d</p>")).toContain("a &constructor; b &toString; c & d");
  });

  it("a knowledge base full of them is indexed and searched", async () => {
    const text = BUILT_INS.join(" ");
    const sections = splitSections(`# Technical\n\n## Words\n${text}\n`, { idPrefix: "kb", source: (s) => `kb#${s}`, documentTitle: "KB" });
    const index = await buildIndex(sections);
    expect(index.search("constructor hasOwnProperty __proto__", 3).map((h) => h.section.id)).toEqual(["kb#technical/words"]);
  });
});
