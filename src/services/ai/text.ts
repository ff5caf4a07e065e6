/** Text helpers of the AI services: interest normalisation, content words, length cuts. */

const STOPWORDS = new Set(
  (
    "a an and are as at be but by for from has have i i'm im in is it its me my of on or our so that the this to we with you your " +
    "am was were been being do does did not no yes very really just like love loves loving enjoy enjoys also too into about " +
    "who what when where which why how all any some more most much many other than then there their they them he she his her " +
    "looking someone person people life time good great new will would can could should want wants need"
  ).split(" "),
);

/** A light English stemmer: hiking, hikes and hike compare equal; so do swimming and swim. */
function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith("ies")) return w.slice(0, -2);
  if (w.length > 5 && w.endsWith("ing")) {
    w = w.slice(0, -3);
    if (w.length > 2 && w[w.length - 1] === w[w.length - 2] && !"aeiousl".includes(w[w.length - 1] ?? "")) w = w.slice(0, -1);
  } else if (w.length > 4 && w.endsWith("es") && !w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith("s") && !w.endsWith("ss")) w = w.slice(0, -1);
  if (w.length > 3 && w.endsWith("e")) return w.slice(0, -1);
  // parties → parti, party → parti
  return w.length > 3 && w.endsWith("y") ? `${w.slice(0, -1)}i` : w;
}

/** An interest in comparable form: lower case, punctuation dropped, each word stemmed. */
export function normaliseInterest(value: string): string {
  const s = value.toLowerCase().normalize("NFKC").replace(/[^\p{L}\p{N} ]+/gu, " ").replace(/\s+/g, " ").trim();
  return s.split(" ").map(stem).join(" ");
}

/** Meaningful words of a free text: comparable form → the word as first written (lower case). */
export function contentWords(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of text.toLowerCase().normalize("NFKC").split(/[^\p{L}\p{N}']+/u)) {
    const word = raw.replace(/'/g, "");
    const key = normaliseInterest(word);
    if (word.length >= 3 && !STOPWORDS.has(word) && !STOPWORDS.has(key) && !/^\d+$/.test(word) && !out.has(key)) out.set(key, word);
  }
  return out;
}

/**
 * The longest prefix of `text` within `max` characters that ends at a sentence end, else at a
 * word boundary, else a hard cut. Counts characters (code points), as the request's validation
 * does: an emoji is one character, not the two UTF-16 units String.length sees.
 */
export function cutToLength(text: string, max: number): string {
  const t = text.trim();
  const chars = Array.from(t);
  if (chars.length <= max) return t;
  // At most max + 1 characters: any prefix of it ending before its last character fits.
  const head = chars.slice(0, max + 1).join("");
  const half = Math.floor(max / 2);
  let sentenceEnd = -1;
  for (const m of head.matchAll(/[.!?…](?=\s|$)/g)) if (charCount(head.slice(0, m.index + 1)) <= max) sentenceEnd = m.index + 1;
  if (sentenceEnd >= 0 && charCount(head.slice(0, sentenceEnd)) >= half) return head.slice(0, sentenceEnd).trim();
  const space = head.lastIndexOf(" ");
  if (space >= 0 && charCount(head.slice(0, space)) >= half) return head.slice(0, space).replace(/[\s,;:–-]+$/u, "").trim();
  return chars.slice(0, max).join("");
}

/** Characters as people count them closely enough and as zod's length checks count them: code points. */
export function charCount(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

export const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));
export const round2 = (value: number) => Math.round(value * 100) / 100;
