import { and, eq, inArray, notInArray, sql } from "drizzle-orm";
import type { IdGenerator } from "../../platform/ids";
import { recordAudit } from "../audit/log";
import type { Principal } from "../../auth/principal";
import type { Db } from "../../db/port";
import { translationStrings } from "../../db/tables/translations";
import { ApiError } from "../../errors";
import { sha256Hex } from "../../platform/hash";
import { DEFAULT_LANGUAGE } from "../ai/languages";
import { checkBundle, expectedKeys, flatten, unflatten, type FlatBundle, type NestedBundle } from "./i18next";
import { bundleLanguage, fallbackChain } from "./languages";

export interface BundleContext {
  db: Db;
  ids: IdGenerator;
  now: number;
  /** The request a write serves, for its audit entry. */
  requestId: string;
}

/** The hash a row keeps of the English text it was written from. */
export const sourceHash = (text: string) => sha256Hex(text).then((h) => h.slice(0, 32));

/** The English bundle of a namespace, flat; 404 when the namespace does not exist. */
export async function englishBundle(db: Db, namespace: string): Promise<FlatBundle> {
  const rows = await db
    .select({ key: translationStrings.key, value: translationStrings.value })
    .from(translationStrings)
    .where(and(eq(translationStrings.namespace, namespace), eq(translationStrings.language, DEFAULT_LANGUAGE)));
  if (rows.length === 0) throw new ApiError("not_found", "no such namespace");
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

export interface ServedBundle {
  bundle: NestedBundle;
  /** The languages whose strings are in the bundle, the asked-for one first (Content-Language). */
  languages: string[];
  /** A strong entity tag of the bundle and its languages. */
  etag: string;
}

/**
 * A namespace's bundle in a language: each key from the first language of its fallback chain
 * (`pt-BR` → `pt` → `en`) that has it. A plural group is taken from one language whole: the
 * asked-for language's plural forms where it has them all, else English's forms under the
 * asked-for language's categories, so i18next finds every form it looks up.
 */
export async function readBundle(db: Db, namespace: string, language: string): Promise<ServedBundle> {
  const chain = fallbackChain(language);
  const rows = await db
    .select({ language: translationStrings.language, key: translationStrings.key, value: translationStrings.value })
    .from(translationStrings)
    .where(and(eq(translationStrings.namespace, namespace), inArray(translationStrings.language, chain)));
  const byLanguage = new Map<string, FlatBundle>(chain.map((l) => [l, {}]));
  for (const r of rows) byLanguage.get(r.language)![r.key] = r.value;
  const english = byLanguage.get(DEFAULT_LANGUAGE)!;
  if (Object.keys(english).length === 0) throw new ApiError("not_found", "no such namespace");

  const expected = expectedKeys(english, language);
  const groupComplete = new Map<string, string>();
  for (const e of expected) {
    if (!e.plural || groupComplete.has(e.plural.base)) continue;
    const forms = expected.filter((x) => x.plural?.base === e.plural!.base);
    const from = chain.find((l) => l !== DEFAULT_LANGUAGE && forms.every((f) => byLanguage.get(l)![f.key] !== undefined));
    groupComplete.set(e.plural.base, from ?? DEFAULT_LANGUAGE);
  }
  const flat: FlatBundle = {};
  const used = new Set<string>();
  for (const e of expected) {
    let from: string;
    if (e.plural) from = groupComplete.get(e.plural.base)!;
    else from = chain.find((l) => byLanguage.get(l)![e.key] !== undefined) ?? DEFAULT_LANGUAGE;
    flat[e.key] = from === DEFAULT_LANGUAGE ? e.source : byLanguage.get(from)![e.key]!;
    used.add(from);
  }
  const languages = chain.filter((l) => used.has(l));
  const bundle = unflatten(flat);
  const etag = `"${(await sha256Hex(`${languages.join(",")}\n${JSON.stringify(bundle)}`)).slice(0, 32)}"`;
  return { bundle, languages, etag };
}

export interface ReplacedBundle {
  namespace: string;
  language: string;
  keys: number;
  updatedAt: string;
}

/** How many validation problems one answer lists; the rest are counted in the message. */
const MAX_ISSUES = 100;

/**
 * Replaces a language's whole bundle with an admin's. It must have exactly the keys English has
 * (with the language's own plural forms) and keep every placeholder, nesting and tag of each.
 */
export async function replaceBundle(ctx: BundleContext, actor: Principal, namespace: string, languageTag: string, body: unknown): Promise<ReplacedBundle> {
  if (actor.role !== "admin") throw new ApiError("forbidden", "only admins replace translation bundles");
  const language = bundleLanguage(languageTag);
  if (!language) throw new ApiError("invalid_language", `'${languageTag}' is not a supported language`, { details: [{ path: "lang", message: "one of the 40 supported languages, optionally with a region (pt-BR)" }] });
  if (language === DEFAULT_LANGUAGE) {
    throw new ApiError("invalid_input", "English is the source language; it changes with the files in locales/en", { details: [{ path: "lang", message: "not en" }] });
  }
  const english = await englishBundle(ctx.db, namespace);
  const issues: { path: string; message: string }[] = [];
  const flat = flatten(body, issues);
  if (issues.length === 0) issues.push(...checkBundle(english, language, flat));
  if (issues.length > 0) {
    const shown = issues.slice(0, MAX_ISSUES);
    const more = issues.length - shown.length;
    throw new ApiError("invalid_input", `the bundle does not match the English '${namespace}' bundle${more ? ` (${more} more problems not listed)` : ""}`, { details: shown });
  }
  const at = new Date(ctx.now);
  const rows = await Promise.all(
    expectedKeys(english, language).map(async (e) => ({
      namespace,
      language,
      key: e.key,
      value: flat[e.key]!,
      sourceHash: await sourceHash(e.sourceText),
      origin: "admin",
      updatedAt: at,
    })),
  );
  await ctx.db.transaction(async (tx) => {
    await tx.delete(translationStrings).where(and(eq(translationStrings.namespace, namespace), eq(translationStrings.language, language)));
    await tx.insert(translationStrings).values(rows);
    await recordAudit(tx, ctx.ids, { actor, requestId: ctx.requestId }, at, { action: "translations.replace", targetType: "translation_bundle", targetId: `${namespace}.${language}`, details: { keys: rows.length } });
  });
  return { namespace, language, keys: rows.length, updatedAt: at.toISOString() };
}

/**
 * Makes the English rows equal to the repository's locales/en bundles: new and changed keys are
 * written, keys gone from a file are deleted, and a namespace whose file is gone loses its English
 * (and so answers 404). Runs after the migrations, under their lock.
 */
export async function syncSourceBundles(db: Db, bundles: Record<string, unknown>, now: number): Promise<{ written: number; removed: number }> {
  const at = new Date(now);
  let written = 0;
  let removed = 0;
  await db.transaction(async (tx) => {
    for (const [namespace, nested] of Object.entries(bundles)) {
      const issues: { path: string; message: string }[] = [];
      const flat = flatten(nested, issues);
      if (issues.length) throw new Error(`locales/en/${namespace}.json: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`);
      const current = new Map(
        (
          await tx
            .select({ key: translationStrings.key, value: translationStrings.value })
            .from(translationStrings)
            .where(and(eq(translationStrings.namespace, namespace), eq(translationStrings.language, DEFAULT_LANGUAGE)))
        ).map((r) => [r.key, r.value]),
      );
      for (const [key, value] of Object.entries(flat)) {
        if (current.get(key) === value) continue;
        await tx
          .insert(translationStrings)
          .values({ namespace, language: DEFAULT_LANGUAGE, key, value, sourceHash: await sourceHash(value), origin: "source", updatedAt: at })
          .onConflictDoUpdate({
            target: [translationStrings.namespace, translationStrings.language, translationStrings.key],
            set: { value, sourceHash: sql`excluded.source_hash`, updatedAt: at },
          });
        written++;
      }
      const gone = [...current.keys()].filter((k) => !Object.hasOwn(flat, k));
      if (gone.length) {
        await tx
          .delete(translationStrings)
          .where(and(eq(translationStrings.namespace, namespace), eq(translationStrings.language, DEFAULT_LANGUAGE), inArray(translationStrings.key, gone)));
        removed += gone.length;
      }
    }
    const dropped = await tx
      .delete(translationStrings)
      .where(
        and(
          eq(translationStrings.language, DEFAULT_LANGUAGE),
          Object.keys(bundles).length ? notInArray(translationStrings.namespace, Object.keys(bundles)) : sql`true`,
        ),
      )
      .returning({ key: translationStrings.key });
    removed += dropped.length;
  });
  return { written, removed };
}
