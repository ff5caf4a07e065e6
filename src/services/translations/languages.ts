import { DEFAULT_LANGUAGE, isLanguage, languageName, type LanguageCode } from "../ai/languages";

/**
 * Bundle languages: the AI routes' 40 languages, and regional variants of them (`pt-BR`), which
 * fall back to their base language and then to English.
 */
const TAG = /^([a-zA-Z]{2,3})(?:[-_]([a-zA-Z]{2}|\d{3}))?$/;

/** The canonical tag (`pt-BR`) for a supported language, or undefined. */
export function bundleLanguage(value: string): string | undefined {
  const m = TAG.exec(value.trim());
  if (!m) return undefined;
  const base = m[1]!.toLowerCase();
  if (!isLanguage(base)) return undefined;
  return m[2] ? `${base}-${m[2].toUpperCase()}` : base;
}

export function baseOf(tag: string): LanguageCode {
  return tag.split("-")[0] as LanguageCode;
}

/** `pt-BR` → [`pt-BR`, `pt`, `en`]; `en` → [`en`]. */
export function fallbackChain(tag: string): string[] {
  const chain = [tag];
  const base = baseOf(tag);
  if (base !== tag) chain.push(base);
  if (base !== DEFAULT_LANGUAGE) chain.push(DEFAULT_LANGUAGE);
  return chain;
}

/** A language's name for prompts: "Portuguese", "Portuguese (BR)". */
export function tagName(tag: string): string {
  const [base, region] = tag.split("-");
  return region ? `${languageName(base as LanguageCode)} (${region})` : languageName(base as LanguageCode);
}

/**
 * The best supported language an Accept-Language header asks for (RFC 9110 12.5.4: highest q
 * first, ties in the order given), English when none is supported.
 */
export function negotiate(header: string | undefined): string {
  if (!header) return DEFAULT_LANGUAGE;
  const ranges = header
    .split(",")
    .slice(0, 32)
    .map((part, index) => {
      const [range = "", ...params] = part.split(";").map((p) => p.trim());
      const q = params.find((p) => p.toLowerCase().startsWith("q="));
      const quality = q === undefined ? 1 : Number(q.slice(2));
      return { range, quality: Number.isFinite(quality) ? quality : 0, index };
    })
    .filter((r) => r.quality > 0 && r.range !== "*")
    .sort((a, b) => b.quality - a.quality || a.index - b.index);
  for (const { range } of ranges) {
    const tag = bundleLanguage(range);
    if (tag) return tag;
    // `pt-PT-x-foo` and other longer tags: their base language still serves.
    const base = bundleLanguage(range.split("-")[0] ?? "");
    if (base) return base;
  }
  return DEFAULT_LANGUAGE;
}
