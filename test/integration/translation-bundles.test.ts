import { beforeAll, describe, expect, it } from "vitest";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, signIn, type Person } from "../support/people";
import { readSourceBundles } from "../../src/node/locales";
import { expectedKeys, flatten, unflatten, type FlatBundle } from "../../src/services/translations/i18next";

const env = useTestEnvironment();
let t: TestApp;
let admin: Person;
let member: Person;
const english = readSourceBundles() as Record<string, Record<string, unknown>>;
const englishFlat = (ns: string) => flatten(english[ns]);

beforeAll(async () => {
  t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE });
  [admin, member] = await Promise.all([signIn(t, env.issuer, { admin: true }), signIn(t, env.issuer)]);
});

/** A full bundle for `language`: every key it needs, each text marked with the language and its tokens kept. */
function translated(ns: string, language: string, tweak: (flat: FlatBundle) => void = () => {}): Record<string, unknown> {
  const flat: FlatBundle = {};
  for (const e of expectedKeys(englishFlat(ns), language)) flat[e.key] = `[${language}] ${e.source}`;
  tweak(flat);
  return unflatten(flat);
}

const put = (who: Person, ns: string, lang: string, body: unknown) =>
  t.request(`/api/v1/admin/translations/${ns}/${lang}`, { method: "PUT", headers: { ...who.headers, "content-type": "application/json" }, body: JSON.stringify(body) });
const get = (path: string, headers: Record<string, string> = {}) => t.request(path, { headers });

async function ok(res: Response, status = 200): Promise<Record<string, unknown>> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as Record<string, unknown>;
}

describe("GET /api/v1/translations/{namespace}", () => {
  it("serves each English source bundle from the database as nested i18next JSON, publicly cacheable", async () => {
    for (const ns of ["common", "onboarding", "wallet", "matching", "errors"]) {
      const res = await get(`/api/v1/translations/${ns}?lang=en`);
      const body = await ok(res);
      expect(body).toEqual(english[ns]);
      expect(res.headers.get("content-language")).toBe("en");
      expect(res.headers.get("cache-control")).toBe("public, max-age=3600");
      expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);
      expect(res.headers.get("vary")).toBeNull();
    }
  });

  it("answers 304 to a matching If-None-Match (a list, a weak form or *), with the tag and caching headers", async () => {
    const first = await get("/api/v1/translations/wallet?lang=en");
    const etag = first.headers.get("etag")!;
    for (const inm of [etag, `"other", ${etag}`, `W/${etag}`, "*"]) {
      const res = await get("/api/v1/translations/wallet?lang=en", { "if-none-match": inm });
      expect(res.status, inm).toBe(304);
      expect(await res.text()).toBe("");
      expect(res.headers.get("etag")).toBe(etag);
      expect(res.headers.get("cache-control")).toBe("public, max-age=3600");
    }
    expect((await get("/api/v1/translations/wallet?lang=en", { "if-none-match": '"stale"' })).status).toBe(200);
  });

  it("negotiates Accept-Language when lang is absent (by q, unsupported ones skipped) and says it varies by it", async () => {
    await ok(await put(admin, "errors", "sw", translated("errors", "sw")));
    const res = await get("/api/v1/translations/errors", { "accept-language": "xx-YY, de;q=0.2, sw-KE;q=0.8" });
    const body = await ok(res);
    expect(body.generic).toBe(`[sw] ${(english.errors as { generic: string }).generic}`);
    expect(res.headers.get("content-language")).toBe("sw");
    expect(res.headers.get("vary")).toBe("Accept-Language");
    const none = await get("/api/v1/translations/errors", { "accept-language": "xx, yy;q=0.5" });
    expect(none.headers.get("content-language")).toBe("en");
    expect((await get("/api/v1/translations/errors")).headers.get("content-language")).toBe("en");
  });

  it("falls back pt-BR → pt → en key by key, and Content-Language names every language served", async () => {
    await ok(await put(admin, "matching", "pt", translated("matching", "pt")));
    // pt-BR differs from pt in one key only.
    await ok(await put(admin, "matching", "pt-BR", translated("matching", "pt-BR", (f) => (f["match.title"] = "Deu match!"))));
    const br = await get("/api/v1/translations/matching?lang=pt-br");
    const body = (await ok(br)) as { match: { title: string; body: string } };
    expect(body.match.title).toBe("Deu match!");
    expect(body.match.body).toBe("[pt-BR] You and {{name}} like each other.");
    expect(br.headers.get("content-language")).toBe("pt-BR");

    // Portugal has no bundle of its own: pt serves it; Angola likewise.
    const pt = await get("/api/v1/translations/matching?lang=pt-PT");
    expect(((await ok(pt)) as { match: { body: string } }).match.body).toBe("[pt] You and {{name}} like each other.");
    expect(pt.headers.get("content-language")).toBe("pt");
    expect(pt.headers.get("etag")).not.toBe(br.headers.get("etag"));
  });

  it("serves keys a language lacks from English, plural groups whole, under the language's own plural categories", async () => {
    await ok(await put(admin, "common", "ru", translated("common", "ru")));
    // A new English key after the Russian bundle was stored, simulated by removing Russian rows.
    await env.db.database.session().db.execute(
      (await import("drizzle-orm")).sql`delete from translation_strings where namespace = 'common' and language = 'ru' and (key = 'greeting' or key = 'units.years_few')`,
    );
    const res = await get("/api/v1/translations/common?lang=ru");
    const body = (await ok(res)) as { greeting: string; actions: { save: string }; units: Record<string, string> };
    expect(body.greeting).toBe("Hi {{name}}!");
    expect(body.actions.save).toBe("[ru] Save");
    // The group lost a form, so English fills every Russian category: one from _one, the rest from _other.
    expect(body.units).toMatchObject({ years_one: "{{count}} year", years_few: "{{count}} years", years_many: "{{count}} years", years_other: "{{count}} years" });
    expect(res.headers.get("content-language")).toBe("ru, en");
  });

  it("accepts a bearer token but does not need one; the answer is the same", async () => {
    const anonymous = await get("/api/v1/translations/onboarding?lang=en");
    const signed = await get("/api/v1/translations/onboarding?lang=en", member.headers);
    expect(signed.status).toBe(200);
    expect(await signed.text()).toBe(await anonymous.text());
    expect(signed.headers.get("etag")).toBe(anonymous.headers.get("etag"));
  });

  it("answers 404 to an unknown namespace and 400 invalid_language to an unsupported or malformed lang", async () => {
    expect(await ok(await get("/api/v1/translations/nosuch?lang=en"), 404)).toMatchObject({ error: "not_found" });
    expect(await ok(await get("/api/v1/translations/common?lang=xx"), 400)).toMatchObject({ error: "invalid_language", details: [{ path: "lang" }] });
    expect((await get("/api/v1/translations/common?lang=../../etc")).status).toBe(400);
    expect((await get(`/api/v1/translations/common?lang=${"e".repeat(40)}`)).status).toBe(400);
    expect((await get(`/api/v1/translations/${"n".repeat(65)}`)).status).toBe(400);
  });
});

describe("PUT /api/v1/admin/translations/{namespace}/{lang}", () => {
  it("stores a complete bundle (Arabic: six plural forms) and answers what it stored; the ETag changes", async () => {
    const before = (await get("/api/v1/translations/wallet?lang=ar")).headers.get("etag");
    const written = await put(admin, "wallet", "ar", translated("wallet", "ar"));
    const stored = await ok(written);
    expect(stored).toMatchObject({ namespace: "wallet", language: "ar", keys: expectedKeys(englishFlat("wallet"), "ar").length });
    const res = await get("/api/v1/translations/wallet?lang=ar");
    const body = (await ok(res)) as { balance: Record<string, string> };
    expect(Object.keys(body.balance).filter((k) => k.startsWith("coins_")).sort()).toEqual(["coins_few", "coins_many", "coins_one", "coins_other", "coins_two", "coins_zero"]);
    expect(res.headers.get("content-language")).toBe("ar");
    expect(res.headers.get("etag")).not.toBe(before);
    const audit = await t.request("/api/v1/admin/audit?action=translations.replace&targetId=wallet.ar", { headers: admin.headers });
    const entries = ((await audit.json()) as { entries: { requestId: string; targetType: string }[] }).entries;
    expect(entries).toContainEqual(expect.objectContaining({ targetType: "translation_bundle", requestId: written.headers.get("x-request-id") }));
  });

  it("refuses a bundle whose keys or placeholders differ from English, naming each problem", async () => {
    const bad = translated("wallet", "fr", (f) => {
      delete f["title"];
      f["extra.key"] = "Surplus";
      f["buy.package"] = "{{coins}} pièces";
      f["transfer.insufficient"] = "Pas assez de pièces. <2>Acheter</2>";
      f["balance.coins_few"] = "{{count}} pièces";
      f["history.received"] = "Reçu de {{name}} {{password}}";
    });
    const body = (await ok(await put(admin, "wallet", "fr", bad), 400)) as { error: string; details: { path: string; message: string }[] };
    expect(body.error).toBe("invalid_input");
    const byPath = Object.fromEntries(body.details.map((d) => [d.path, d.message]));
    expect(byPath["title"]).toMatch(/missing/);
    expect(byPath["extra.key"]).toMatch(/not a key/);
    expect(byPath["buy.package"]).toMatch(/missing \{\{price\}\}/);
    expect(byPath["transfer.insufficient"]).toMatch(/missing <\/1>, <1>; not in the English text: <\/2>, <2>/);
    expect(byPath["balance.coins_few"]).toMatch(/not a plural category of fr/);
    expect(byPath["history.received"]).toMatch(/\{\{password\}\}/);
    // Nothing was stored.
    expect((await get("/api/v1/translations/wallet?lang=fr")).headers.get("content-language")).toBe("en");
  });

  it("lets a plural form leave out {{count}} (Japanese has one form) but not other placeholders", async () => {
    await ok(await put(admin, "onboarding", "ja", translated("onboarding", "ja", (f) => (f["steps.photos.added_other"] = "写真を追加しました"))));
    const bad = translated("onboarding", "ja", (f) => (f["steps.progress"] = "ステップ {{current}}"));
    expect(await ok(await put(admin, "onboarding", "ja", bad), 400)).toMatchObject({ details: [{ path: "steps.progress", message: "missing {{total}}" }] });
  });

  it("refuses English, unsupported languages, non-string values and unknown namespaces", async () => {
    expect(await ok(await put(admin, "common", "en", english.common), 400)).toMatchObject({ error: "invalid_input", details: [{ path: "lang" }] });
    expect(await ok(await put(admin, "common", "xx", {}), 400)).toMatchObject({ error: "invalid_language" });
    expect(await ok(await put(admin, "common", "de", { actions: ["Save"] }), 400)).toMatchObject({ details: [{ path: "actions" }] });
    expect(await ok(await put(admin, "common", "de", { "bad key!": "x" }), 400)).toMatchObject({ details: [{ path: "bad key!" }] });
    expect(await ok(await put(admin, "nosuch", "de", {}), 404)).toMatchObject({ error: "not_found" });
  });

  it("is for admins: a member gets 403 and nothing changes", async () => {
    const res = await put(member, "common", "it", translated("common", "it"));
    expect(await ok(res, 403)).toMatchObject({ error: "forbidden" });
    expect((await get("/api/v1/translations/common?lang=it")).headers.get("content-language")).toBe("en");
  });
});
