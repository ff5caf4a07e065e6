import { describe, expect, it } from "vitest";
import { categoryOf, splitSections } from "../../src/services/kb/sections";
import { escalationReasons } from "../../src/services/support/escalation";
import { leadSentences } from "../../src/services/support/agent";

describe("escalation words", () => {
  it.each([
    ["Can I speak to a human please", ["asked_for_person"]],
    ["quiero hablar con una persona", ["asked_for_person"]],
    ["je veux parler à un conseiller", ["asked_for_person"]],
    ["He threatened to find me", ["threat"]],
    ["I don't want to live anymore, I want to die", ["self_harm"]],
    ["she told me she is 16 years old", ["minor"]],
    ["this profile is a minor", ["minor"]],
    ["he is blackmailing me", ["extortion"]],
    ["me está haciendo chantaje", ["extortion"]],
    // The other scripts of the spec's first thirteen languages.
    ["Я хочу покончить с собой", ["self_harm"]],
    ["Он угрожает мне", ["threat"]],
    ["Он меня шантажирует и вымогает деньги", ["extortion"]],
    ["أريد أن أموت", ["self_harm"]],
    ["اريد ان اموت", ["self_harm"]],
    ["هذا الحساب لقاصر", ["minor"]],
    ["他威胁我", ["threat"]],
    ["我想自杀", ["self_harm"]],
    ["對方是未成年", ["minor"]],
    ["死にたいです", ["self_harm"]],
    ["写真で恐喝されています", ["extortion"]],
    ["죽고 싶어요", ["self_harm"]],
    ["상담원과 통화하고 싶어요", ["asked_for_person"]],
    ["वह मुझे धमकी दे रहा है", ["threat"]],
    ["मैं आत्महत्या करना चाहता हूँ", ["self_harm"]],
  ])("%s → %j", (text, reasons) => {
    expect(escalationReasons(text)).toEqual(reasons);
  });

  it.each([
    "I'd like a refund",
    "what kind of plans are there",
    "a minor issue with my photos",
    "my account is set to hidden",
    "how do I pass on someone",
    "Как купить монеты?",
    "كيف أشتري العملات؟",
    "怎么购买金币？",
    "コインの買い方を教えてください",
    "아이디를 잊어버렸어요",
    "मैं सिक्के कैसे खरीदूं?",
  ])(
    "ordinary question: %s",
    (text) => {
      expect(escalationReasons(text)).toEqual([]);
    },
  );
});

describe("categories and sections", () => {
  it("classifies common questions", () => {
    expect(categoryOf("I would like a refund for my premium plan")).toBe("billing");
    expect(categoryOf("I forgot my password")).toBe("account");
    expect(categoryOf("someone is harassing me")).toBe("safety");
    expect(categoryOf("why don't I get matches")).toBe("matching");
    expect(categoryOf("hello there")).toBeUndefined();
  });

  it("splits Markdown at headings, outside code fences, with unique ids and the category of the top heading", () => {
    const md = "Intro text.\n# Billing\n## Refunds\nNo refunds.\n```\n# not a heading\n```\n## Refunds\nSecond.\n# Other\n### Deep\nDeep text.";
    const sections = splitSections(md, { idPrefix: "kb", source: (p) => `kb#${p}`, documentTitle: "Knowledge base" });
    expect(sections.map((s) => [s.id, s.title, s.category])).toEqual([
      ["kb#knowledge-base", "Knowledge base", "technical"],
      ["kb#billing/refunds", "Refunds", "billing"],
      ["kb#billing/refunds-2", "Refunds", "billing"],
      ["kb#other/deep", "Deep", "technical"],
    ]);
    expect(sections[1]!.text).toContain("# not a heading");
  });

  it("quotes a section's first sentences, not the whole of it", () => {
    const text = `${"First sentence here. ".repeat(3)}${"Later detail that goes on. ".repeat(30)}`;
    const lead = leadSentences(text);
    expect(lead.startsWith("First sentence here.")).toBe(true);
    expect(lead.length).toBeLessThan(470);
  });
});
