/**
 * The languages the AI routes answer in: the 13 the spec shows first, then the others. One list;
 * request validation, prompts and docs/api/ai.md all read it.
 */
export const LANGUAGES = {
  en: "English",
  es: "Spanish",
  fr: "French",
  sw: "Swahili",
  ar: "Arabic",
  zh: "Chinese",
  hi: "Hindi",
  pt: "Portuguese",
  ru: "Russian",
  ja: "Japanese",
  ko: "Korean",
  de: "German",
  it: "Italian",
  nl: "Dutch",
  pl: "Polish",
  tr: "Turkish",
  vi: "Vietnamese",
  th: "Thai",
  id: "Indonesian",
  ms: "Malay",
  bn: "Bengali",
  ur: "Urdu",
  fa: "Persian",
  he: "Hebrew",
  el: "Greek",
  uk: "Ukrainian",
  ro: "Romanian",
  hu: "Hungarian",
  cs: "Czech",
  sv: "Swedish",
  da: "Danish",
  no: "Norwegian",
  fi: "Finnish",
  tl: "Filipino",
  am: "Amharic",
  ha: "Hausa",
  yo: "Yoruba",
  ig: "Igbo",
  zu: "Zulu",
  ta: "Tamil",
} as const;

export type LanguageCode = keyof typeof LANGUAGES;
export const LANGUAGE_CODES = Object.keys(LANGUAGES) as LanguageCode[];
export const DEFAULT_LANGUAGE: LanguageCode = "en";

export function isLanguage(value: unknown): value is LanguageCode {
  return typeof value === "string" && Object.hasOwn(LANGUAGES, value);
}

export function languageName(code: LanguageCode): string {
  return LANGUAGES[code];
}
