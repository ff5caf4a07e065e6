/** The support categories of the support chat result (api-spec: topic values). */
export const SUPPORT_CATEGORIES = ["billing", "account", "matching", "safety", "technical"] as const;
export type SupportCategory = (typeof SUPPORT_CATEGORIES)[number];

/** A retrievable piece of grounding material: one heading and the text under it. */
export interface Section {
  /** Unique across the KB and every asset, e.g. `kb#billing/buying-coins` or `kba_…#intro`. */
  id: string;
  title: string;
  /** What a citation points at: `kb#…` for the document, the asset's source for assets. */
  source: string;
  /** Headings above this one, outermost first; indexed with the title. */
  path: string[];
  category: SupportCategory;
  text: string;
}

// Linear on purpose: a pattern that also strips the closing #s (lazy text, then optional blanks
// and #s) backtracks cubically on a heading followed by a long run of blanks, and KB text comes
// from admins and from fetched third-party pages.
const HEADING = /^(#{1,6})[ \t]+(\S.*)$/;
const FENCE = /^\s*(```|~~~)/;

export function slug(text: string): string {
  const s = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "-")
    .replace(/^-+|-+$/g, "");
  return s.slice(0, 80) || "section";
}

// Words that place a heading or a question in a category. Checked in this order, so "report a
// scam payment" lands in safety before billing.
const CATEGORY_WORDS: [SupportCategory, RegExp][] = [
  ["safety", /\b(safety|safe|block\w*|report\w*|scam\w*|harass\w*|threat\w*|extort\w*|blackmail\w*|abuse\w*|underage|minor|fake|stalk\w*|danger\w*|meet\w* in person)\b/i],
  ["billing", /\b(billing|bill\w*|coin\w*|wallet|pay\w*|refund\w*|charge\w*|price\w*|cost\w*|subscri\w*|plan\w*|premium|enterprise|card|crypto|mobile money|transfer\w*|balance|purchase\w*|buy\w*|money)\b/i],
  ["matching", /\b(match\w*|discover\w*|swip\w*|likes|liked|wink\w*|pass(es|ed)?|feed|unmatch\w*|date|dating)\b/i],
  ["account", /\b(account\w*|profile\w*|sign\w*[ -]?in|login|log in|password|email|delete|photo\w*|bio|visib\w*|hidden|api key\w*)\b/i],
  ["technical", /\b(error\w*|slow|crash\w*|bug\w*|app|notification\w*|limit\w*|technical|language\w*|update\w*|connection)\b/i],
];

/** The category a piece of text is about, or undefined when no word gives it away. */
export function categoryOf(text: string): SupportCategory | undefined {
  for (const [category, words] of CATEGORY_WORDS) if (words.test(text)) return category;
  return undefined;
}

/** A top-level heading that names a category decides for everything under it. */
function categoryOfHeading(heading: string | undefined): SupportCategory | undefined {
  if (!heading) return undefined;
  const lower = heading.toLowerCase();
  const named = SUPPORT_CATEGORIES.find((c) => lower.includes(c));
  return named ?? categoryOf(heading);
}

/**
 * Splits Markdown into sections at every heading (outside code fences). Text before the first
 * heading becomes a section titled after the document. Headings with no text of their own are
 * kept only as the path of the sections below them.
 */
export function splitSections(markdown: string, options: { idPrefix: string; source: (slugPath: string) => string; documentTitle: string; titlePrefix?: string }): Section[] {
  const sections: Section[] = [];
  const stack: { level: number; title: string }[] = [];
  const used = new Set<string>();
  const nextSuffix = new Map<string, number>();
  let body: string[] = [];
  let current: { title: string; path: string[] } = { title: options.documentTitle, path: [] };
  let fenced = false;

  const flush = () => {
    const text = body.join("\n").trim();
    body = [];
    if (!text) return;
    const slugPath = [...current.path, current.title].map(slug).join("/");
    const base = `${options.idPrefix}#${slugPath}`;
    let id = base;
    // Each repeated id resumes counting where the last one stopped: thousands of equal headings
    // would otherwise cost a scan over all the earlier ones each.
    for (let n = nextSuffix.get(base) ?? 2; used.has(id); n++) {
      id = `${base}-${n}`;
      nextSuffix.set(base, n + 1);
    }
    used.add(id);
    const category = categoryOfHeading(current.path[0] ?? current.title) ?? categoryOf(`${current.title} ${text}`) ?? "technical";
    sections.push({
      id,
      title: options.titlePrefix ? `${options.titlePrefix} › ${current.title}` : current.title,
      source: options.source(id.slice(options.idPrefix.length + 1)),
      path: current.path,
      category,
      text,
    });
  };

  for (const line of markdown.split(/\r?\n/)) {
    if (FENCE.test(line)) fenced = !fenced;
    const heading = fenced ? null : HEADING.exec(line);
    if (!heading) {
      body.push(line);
      continue;
    }
    flush();
    const level = heading[1]!.length;
    const title = headingText(heading[2]!);
    while (stack.length && stack[stack.length - 1]!.level >= level) stack.pop();
    current = { title, path: stack.map((h) => h.title) };
    stack.push({ level, title });
  }
  flush();
  return sections;
}

/**
 * A heading's text without its optional closing sequence: trailing #s count as one only after a
 * blank (CommonMark), so "C#" keeps its #. A loop, not a pattern (see HEADING).
 */
function headingText(raw: string): string {
  const text = raw.trimEnd();
  let end = text.length;
  while (end > 0 && text[end - 1] === "#") end--;
  if (end === text.length) return text;
  if (end === 0) return text;
  const before = text[end - 1];
  return before === " " || before === "\t" ? text.slice(0, end).trimEnd() || text : text;
}
