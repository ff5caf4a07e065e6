import { describe, expect, it } from "vitest";
import { htmlTitle, htmlToText } from "../../src/services/kb/html";
import { splitSections } from "../../src/services/kb/sections";
import { leadSentences, sentencesOf } from "../../src/services/support/agent";

/**
 * KB text comes from admins and from third-party pages: every parser here reads it in one
 * forward pass. The hostile inputs below took the earlier patterns from seconds to hours (a
 * heading before 5,000 blanks: 32 s; 20,000 repeated headings: 21 s; 80 KB of "<h1>": 0.4 s,
 * growing fourfold per doubling); here they are several times larger and must simply finish
 * within the test's time limit with the right answer.
 */
const split = (md: string) => splitSections(md, { idPrefix: "kb", source: (p) => `kb#${p}`, documentTitle: "Doc" });

describe("Markdown headings", () => {
  it("reads a heading followed by a long run of blanks", () => {
    const [section] = split(`# a${" \t".repeat(25_000)}x\nbody`);
    expect(section?.title).toBe(`a${" \t".repeat(25_000)}x`);
    expect(section?.text).toBe("body");
  });

  it("gives 20,000 equal headings ids in order, each once", () => {
    const ids = split("# a\nx\n".repeat(20_000)).map((s) => s.id);
    expect(ids.slice(0, 3)).toEqual(["kb#a", "kb#a-2", "kb#a-3"]);
    expect(ids.at(-1)).toBe("kb#a-20000");
    expect(new Set(ids).size).toBe(20_000);
  });

  it("drops a closing sequence of #s only after a blank, as CommonMark does", () => {
    expect(split("## Title ##\nx\n## C#\ny\n## Tabs\t#\t\nz\n## ###\nw").map((s) => s.title)).toEqual(["Title", "C#", "Tabs", "###"]);
  });
});

describe("HTML to grounding text", () => {
  it("keeps the text, headings and list items of a page and drops its scripts, styles and comments", () => {
    const page = `<html><head><title>Help &amp; FAQ</title><style>p{color:red}</style></head><body><!-- note --><h1 class="x">Buying <b>coins</b></h1>
      <p>Coins cost $4.99.<br>Cancel any time.</p><ul><li>One</li><li>Two</li></ul><script>alert("x")</script><h2>Refunds</h2><p>3 < 4 and 5 > 2</p></body></html>`;
    expect(htmlTitle(page)).toBe("Help & FAQ");
    const text = htmlToText(page);
    expect(text).toContain("# Buying coins\n\nCoins cost $4.99.\nCancel any time.");
    expect(text).toContain("- One");
    expect(text).toContain("## Refunds\n\n3 < 4 and 5 > 2");
    expect(text).not.toMatch(/color|alert|note|FAQ/);
  });

  it("reads a page of openers that never close in one pass", () => {
    for (const opener of ["<h1>", "<title>", "<!--", "<script>", "<a", "<"]) {
      const page = `Intro ${opener.repeat(200_000)}`;
      expect(htmlToText(page).startsWith("Intro"), opener).toBe(true);
      expect(htmlTitle(page), opener).toBeUndefined();
    }
  });

  it("treats an unclosed heading as markup and still reads the rest", () => {
    expect(htmlToText("<h1>Lost heading<p>Body text</p><h2>Kept</h2>After")).toBe("Lost heading Body text\n\n## Kept\n\nAfter");
  });
});

describe("the fallback's lead sentences", () => {
  it("quote sentences whole: prices, versions and host names do not end a sentence", () => {
    expect(leadSentences("Costs are $4.99 per month. Cancel any time.")).toBe("Costs are $4.99 per month. Cancel any time.");
    expect(sentencesOf("Version 2.5 of the app fixes sign-in. Update from help.example.com today.")).toEqual([
      "Version 2.5 of the app fixes sign-in. ",
      "Update from help.example.com today.",
    ]);
    expect(sentencesOf("Wait... what?! Yes.")).toEqual(["Wait... ", "what?! ", "Yes."]);
  });

  it("end CJK sentences at their terminators, which need no blank after them", () => {
    expect(sentencesOf("你好。我们可以帮助你！再见")).toEqual(["你好。", "我们可以帮助你！", "再见"]);
  });

  it("read only the opening of a very long section", () => {
    expect(leadSentences(`${"a".repeat(400_000)}.b`)).toHaveLength(460);
  });
});
