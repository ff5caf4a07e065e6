/**
 * A small language guesser for the eval's "answered in the requested language" check: the script
 * for languages with their own, common function words for Latin-script ones. It needs a sentence
 * or two and knows only the languages the golden cases ask for; anything else is "unknown".
 */
const SCRIPTS: [RegExp, string][] = [
  [/[\u3040-\u30ff]/g, "ja"], // kana, before Han: Japanese also uses Han
  [/[\uac00-\ud7af]/g, "ko"],
  [/[\u4e00-\u9fff]/g, "zh"],
  [/[\u0600-\u06ff]/g, "ar"],
  [/[\u0900-\u097f]/g, "hi"],
  [/[\u0400-\u04ff]/g, "ru"],
];

const STOPWORDS: Record<string, string[]> = {
  en: ["the", "and", "you", "to", "of", "is", "with", "for", "your", "are", "that", "in", "it", "this", "both"],
  es: ["el", "la", "de", "que", "y", "en", "los", "las", "con", "por", "para", "una", "es", "tu", "su", "del", "me", "mi", "yo", "muy", "pero", "está", "también", "tú"],
  fr: ["le", "la", "les", "de", "et", "des", "vous", "est", "une", "pour", "avec", "que", "du", "en", "votre", "sur", "je", "ne", "pas", "ce", "moi", "suis", "mais", "très", "toi", "ça"],
  de: ["der", "die", "das", "und", "ist", "mit", "sie", "ein", "eine", "für", "zu", "den", "nicht", "auf", "ich", "auch"],
  it: ["il", "la", "di", "che", "e", "per", "con", "una", "sono", "gli", "del", "della", "non", "ti", "è"],
  pt: ["o", "a", "de", "que", "e", "do", "da", "em", "um", "uma", "para", "com", "você", "os", "não", "seu"],
  sw: ["na", "ya", "wa", "kwa", "ni", "za", "katika", "hii", "la", "kama", "yako", "wako", "pia", "sana"],
};

export function guessLanguage(text: string): string {
  const letters = text.replace(/[\s\d\p{P}\p{S}]/gu, "");
  if (letters.length === 0) return "unknown";
  for (const [pattern, code] of SCRIPTS) {
    const hits = text.match(pattern)?.length ?? 0;
    if (hits / letters.length > 0.3) return code;
  }
  const words = text.toLowerCase().match(/\p{L}+/gu) ?? [];
  const scores = Object.entries(STOPWORDS)
    .map(([code, list]) => {
      const set = new Set(list);
      return { code, score: words.filter((w) => set.has(w)).length };
    })
    .sort((a, b) => b.score - a.score);
  const [first, second] = scores;
  // Two function words at least, so a name or a loan word alone decides nothing; a tie decides nothing either.
  if (!first || first.score < 2 || first.score === second?.score) return "unknown";
  return first.code;
}
