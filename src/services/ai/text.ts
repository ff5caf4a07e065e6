/** Text helpers of the AI services: interest normalisation, content words, length cuts. */

const STOPWORDS = new Set(
  (
    "a an and are as at be but by for from has have i i'm im in is it its me my of on or our so that the this to we with you your " +
    "am was were been being do does did not no yes very really just like love loves loving enjoy enjoys also too into about " +
    "who what when where which why how all any some more most much many other than then there their they them he she his her " +
    "looking someone person people life time good great new will would can could should want wants need"
  ).split(" "),
);

/** An interest in comparable form: lower case, punctuation dropped, a plural "s" removed. */
export function normaliseInterest(value: string): string {
  const s = value.toLowerCase().normalize("NFKC").replace(/[^\p{L}\p{N} ]+/gu, " ").replace(/\s+/g, " ").trim();
  return s.length > 3 && s.endsWith("s") && !s.endsWith("ss") ? s.slice(0, -1) : s;
}

/** Distinct meaningful words of a free text, normalised like interests. */
export function contentWords(text: string): Set<string> {
  const out = new Set<string>();
  for (const raw of text.toLowerCase().normalize("NFKC").split(/[^\p{L}\p{N}']+/u)) {
    const word = normaliseInterest(raw);
    if (word.length >= 3 && !STOPWORDS.has(word) && !/^\d+$/.test(word)) out.add(word);
  }
  return out;
}

/**
 * The longest prefix of `text` within `max` characters that ends at a sentence end, else at a
 * word boundary, else a hard cut. Counts UTF-16 code units like String.length (what clients see).
 */
export function cutToLength(text: string, max: number): string {
  const t = text.trim();
  if (t.length <= max) return t;
  const head = t.slice(0, max + 1);
  let sentenceEnd = -1;
  for (const m of head.matchAll(/[.!?…](?=\s|$)/g)) if (m.index + 1 <= max) sentenceEnd = m.index + 1;
  if (sentenceEnd >= Math.floor(max / 2)) return t.slice(0, sentenceEnd).trim();
  const space = head.lastIndexOf(" ", max);
  if (space >= Math.floor(max / 2)) return t.slice(0, space).replace(/[\s,;:–-]+$/u, "").trim();
  return [...t].slice(0, max).join("").slice(0, max);
}

export const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));
export const round2 = (value: number) => Math.round(value * 100) / 100;
