import type { FieldIssue } from "../../errors";

/**
 * The parts of the i18next JSON v4 format the platform relies on: nested keys joined by ".",
 * `{{var}}` interpolation, `$t(key)` nesting, plural forms as `<key>_<CLDR category>` and the
 * tags of react-i18next's Trans (`<1>…</1>`, `<br/>`). Pure functions; no I/O.
 */
export type FlatBundle = Record<string, string>;
export interface NestedBundle {
  [key: string]: string | NestedBundle;
}

export const PLURAL_SUFFIXES = ["zero", "one", "two", "few", "many", "other"] as const;
export type PluralCategory = (typeof PLURAL_SUFFIXES)[number];

const MAX_DEPTH = 8;
const KEY_PART = /^[A-Za-z0-9_-]{1,64}$/;

/** A nested bundle as flat "a.b.c" keys; problems (arrays, numbers, bad key names) as field issues. */
export function flatten(bundle: unknown, issues: FieldIssue[] = [], prefix = "", out: FlatBundle = {}, depth = 0): FlatBundle {
  if (bundle === null || typeof bundle !== "object" || Array.isArray(bundle)) {
    issues.push({ path: prefix || "(root)", message: "an object of strings and nested objects" });
    return out;
  }
  for (const [part, value] of Object.entries(bundle)) {
    const key = prefix ? `${prefix}.${part}` : part;
    if (!KEY_PART.test(part)) issues.push({ path: key, message: "key parts are 1 to 64 letters, digits, '_' or '-'" });
    else if (typeof value === "string") out[key] = value;
    else if (depth + 1 < MAX_DEPTH && value !== null && typeof value === "object" && !Array.isArray(value)) flatten(value, issues, key, out, depth + 1);
    else issues.push({ path: key, message: depth + 1 >= MAX_DEPTH ? `nested at most ${MAX_DEPTH} levels deep` : "a string or a nested object" });
  }
  return out;
}

/** Flat keys back into i18next's nested JSON, keys in sorted order so equal bundles serialise equally. */
export function unflatten(flat: FlatBundle): NestedBundle {
  const root: NestedBundle = {};
  for (const key of Object.keys(flat).sort()) {
    const parts = key.split(".");
    let node = root;
    for (const part of parts.slice(0, -1)) {
      const next = node[part];
      if (typeof next === "object") node = next;
      else node = node[part] = {};
    }
    node[parts[parts.length - 1]!] = flat[key]!;
  }
  return root;
}

const TOKEN = /\{\{\s*([^{}]+?)\s*\}\}|\$t\(([^()]*)\)|<(\/?)([A-Za-z0-9]{1,16})\s*(\/?)>/g;

/**
 * The parts of a string a translation must keep verbatim: interpolations (`{{name}}`, spaces
 * ignored), nestings (`$t(ns:key)`) and Trans tags, sorted, repeats included.
 */
export function tokensOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(TOKEN)) {
    if (m[1] !== undefined) out.push(`{{${m[1].replace(/\s+/g, " ")}}}`);
    else if (m[2] !== undefined) out.push(`$t(${m[2].trim()})`);
    else out.push(`<${m[3]}${m[4]}${m[5]}>`);
  }
  return out.sort();
}

const COUNT = "{{count}}";

/** The plural group a key belongs to (`items_one` → `items`, `one`), if any. */
export function pluralOf(key: string): { base: string; category: PluralCategory } | undefined {
  const at = key.lastIndexOf("_");
  if (at <= 0) return undefined;
  const category = key.slice(at + 1) as PluralCategory;
  return PLURAL_SUFFIXES.includes(category) ? { base: key.slice(0, at), category } : undefined;
}

/** The CLDR plural categories of a language (`Intl.PluralRules`), in the suffix order. */
export function pluralCategories(language: string): PluralCategory[] {
  const cats = new Intl.PluralRules(language).resolvedOptions().pluralCategories as string[];
  return PLURAL_SUFFIXES.filter((c) => cats.includes(c));
}

/** One key a language's bundle must hold, with the English text it is translated from. */
export interface ExpectedKey {
  key: string;
  /** The English text to translate: the same key, or for a plural form the English form closest to it. */
  source: string;
  /** Tokens the translation must contain (a plural form may leave out `{{count}}`). */
  required: string[];
  /** Tokens the translation may contain. */
  allowed: Set<string>;
  /** The English text(s) it stands for; its hash decides whether a stored translation is current. */
  sourceText: string;
  /** Set for a plural form. */
  plural?: { base: string; category: PluralCategory };
}

/**
 * The keys a language's bundle has: every English key, except that an English plural group
 * (`_one`, `_other`…) becomes the language's own CLDR categories; an English `_zero` form (which
 * i18next uses for a count of 0 in any language) is kept.
 */
export function expectedKeys(english: FlatBundle, language: string): ExpectedKey[] {
  const groups = new Map<string, Partial<Record<PluralCategory, string>>>();
  const out: ExpectedKey[] = [];
  for (const [key, text] of Object.entries(english)) {
    const plural = pluralOf(key);
    // A lone `_one` with no `_other` is not a plural group; i18next needs `_other`.
    if (plural && Object.hasOwn(english, `${plural.base}_other`)) {
      const forms = groups.get(plural.base) ?? {};
      forms[plural.category] = text;
      groups.set(plural.base, forms);
    } else {
      const tokens = tokensOf(text);
      out.push({ key, source: text, required: tokens, allowed: new Set(tokens), sourceText: text });
    }
  }
  const categories = pluralCategories(language);
  for (const [base, forms] of groups) {
    const wanted = new Set<PluralCategory>(categories);
    if (forms.zero !== undefined) wanted.add("zero");
    const allowed = new Set(Object.values(forms).flatMap((t) => tokensOf(t ?? "")));
    const sourceText = PLURAL_SUFFIXES.filter((c) => forms[c] !== undefined)
      .map((c) => `${c}:${forms[c]}`)
      .join("\n");
    for (const category of PLURAL_SUFFIXES.filter((c) => wanted.has(c))) {
      const source = forms[category] ?? (category === "one" ? (forms.one ?? forms.other!) : forms.other!);
      const required = tokensOf(forms.other!).filter((t) => t !== COUNT);
      out.push({ key: `${base}_${category}`, source, required, allowed, sourceText, plural: { base, category } });
    }
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Why a translation does not keep its source's tokens, or undefined when it does. */
export function tokenProblem(expected: ExpectedKey, translation: string): string | undefined {
  const got = tokensOf(translation);
  const counts = new Map<string, number>();
  for (const t of got) counts.set(t, (counts.get(t) ?? 0) + 1);
  const missing = expected.required.filter((t) => {
    const n = counts.get(t) ?? 0;
    if (n === 0) return true;
    counts.set(t, n - 1);
    return false;
  });
  const foreign = [...new Set(got.filter((t) => !expected.allowed.has(t)))];
  if (missing.length === 0 && foreign.length === 0) return undefined;
  const parts = [];
  if (missing.length) parts.push(`missing ${missing.join(", ")}`);
  if (foreign.length) parts.push(`not in the English text: ${foreign.join(", ")}`);
  return parts.join("; ");
}

/** Checks a language's full bundle against English: the same keys (plural forms per language) and tokens. */
export function checkBundle(english: FlatBundle, language: string, bundle: FlatBundle): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const expected = expectedKeys(english, language);
  const wanted = new Set(expected.map((e) => e.key));
  for (const e of expected) {
    const value = bundle[e.key];
    if (value === undefined) issues.push({ path: e.key, message: e.plural ? `missing: the '${e.plural.category}' plural form ${language} needs` : "missing: English has this key" });
    else if (value.trim() === "") issues.push({ path: e.key, message: "empty" });
    else {
      const problem = tokenProblem(e, value);
      if (problem) issues.push({ path: e.key, message: problem });
    }
  }
  for (const key of Object.keys(bundle)) {
    if (wanted.has(key)) continue;
    const plural = pluralOf(key);
    issues.push({ path: key, message: plural && wanted.has(`${plural.base}_other`) ? `'${plural.category}' is not a plural category of ${language}` : "not a key of the English bundle" });
  }
  return issues;
}
