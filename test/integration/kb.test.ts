import { describe, expect, it } from "vitest";
import { fixedClock } from "../../src/platform/clock";
import { createMemoryBlobStore } from "../../src/services/kb/blob-store";
import type { AssetRecord as Asset } from "../../src/services/kb/assets";
import { createKbCache } from "../../src/services/kb/snapshot";
import { buildTestApp, type TestApp } from "../support/app";
import { GUIDE_MD, routedFetch, tableResolver, useDocumentServer } from "../support/document-server";
import { useTestEnvironment } from "../support/environment";
import { expectError } from "../support/errors";
import { ENTERPRISE, signIn, type Person } from "../support/people";
import { json } from "../support/users";

const env = useTestEnvironment();
const docs = useDocumentServer();

function app(clock = fixedClock(Date.now())) {
  const blobs = createMemoryBlobStore();
  const t = buildTestApp({
    database: env.db.database,
    issuer: env.issuer,
    tierLookup: ENTERPRISE,
    clock,
    fetch: routedFetch(["docs.test"]),
    deps: { blobs, resolver: tableResolver({ "docs.test": ["127.0.0.1"] }), assetFetchAllowedHosts: ["docs.test"] },
  });
  return { t, clock, blobs };
}

interface KbDoc {
  content: string;
  version: number;
  updatedAt: string;
}
async function getKb(t: TestApp, who: Person): Promise<KbDoc> {
  const res = await t.request("/api/v1/kb", { headers: who.headers });
  expect(res.status).toBe(200);
  return (await res.json()) as KbDoc;
}
const putKb = (t: TestApp, who: Person, content: unknown) =>
  t.request("/api/v1/kb", { method: "PUT", headers: { ...who.headers, "content-type": "application/json" }, body: JSON.stringify({ content }) });

function upload(t: TestApp, who: Person, file: { name: string; type: string; body: BlobPart }, fields: Record<string, string> = {}) {
  const form = new FormData();
  form.set("file", new File([file.body], file.name, { type: file.type }));
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  return t.request("/api/v1/kb/assets", { method: "POST", headers: who.headers, body: form });
}
/** Every asset, page by page. */
async function assets(t: TestApp, who: Person, limit = 20): Promise<Asset[]> {
  const all: Asset[] = [];
  let cursor: string | null = null;
  do {
    const res = await t.request(`/api/v1/kb/assets?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`, { headers: who.headers });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { assets: Asset[]; nextCursor: string | null };
    expect(page.assets.length).toBeLessThanOrEqual(limit);
    all.push(...page.assets);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return all;
}
/** The best sections for a query in the KB as it is now, as a fresh instance reads it. */
async function search(t: TestApp, query: string): Promise<string[]> {
  const snapshot = await createKbCache(t.deps.clock).get(t.deps.database.session().db);
  return (await snapshot.index()).search(query, 3).map((h) => h.section.id);
}

describe("a fresh install", () => {
  // A database of its own: other tests here replace the document.
  const fresh = useTestEnvironment();
  it("ships a starter knowledge base covering every support category", async () => {
    const t = buildTestApp({ database: fresh.db.database, issuer: fresh.issuer, tierLookup: ENTERPRISE });
    const user = await signIn(t, fresh.issuer);
    const doc = await getKb(t, user);
    // Version 2: the starter, with its account deletion section brought up to the self-service flow.
    expect(doc.version).toBe(2);
    for (const heading of ["# Billing", "# Coins and wallet", "# Account", "# Matching", "# Safety", "# Technical"]) expect(doc.content).toContain(heading);
    expect(doc.content).toContain("You can delete your account yourself at any time, without contacting support");
    expect(doc.content).not.toContain("Contact support from your account to delete it");
    expect(new Date(doc.updatedAt).toISOString()).toBe(doc.updatedAt);
  });
});

describe("the knowledge base document", () => {

  it("answers raw Markdown for Accept: text/markdown, and 304 for a matching ETag", async () => {
    const { t } = app();
    const user = await signIn(t, env.issuer);
    const res = await t.request("/api/v1/kb", { headers: { ...user.headers, accept: "text/markdown" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/markdown/);
    const text = await res.text();
    expect(text.startsWith("#")).toBe(true);
    const etag = res.headers.get("etag");
    expect(etag).toMatch(/^"kb-\d+\.md"$/);
    const again = await t.request("/api/v1/kb", { headers: { ...user.headers, accept: "text/markdown", "if-none-match": etag! } });
    expect(again.status).toBe(304);
    // The JSON form has a tag of its own: the Markdown copy's tag does not confirm it.
    const json = await t.request("/api/v1/kb", { headers: { ...user.headers, "if-none-match": etag! } });
    expect(json.status).toBe(200);
    expect(json.headers.get("etag")).toBe(etag!.replace(".md", ""));
  });

  it("reads If-None-Match as HTTP does: weak tags, lists and * match; Accept with q=0 or a wildcard keeps JSON", async () => {
    const { t } = app();
    const user = await signIn(t, env.issuer);
    const tag = (await t.request("/api/v1/kb", { headers: user.headers })).headers.get("etag")!;
    for (const header of [`W/${tag}`, `"other", ${tag}`, "*"]) {
      expect((await t.request("/api/v1/kb", { headers: { ...user.headers, "if-none-match": header } })).status, header).toBe(304);
    }
    expect((await t.request("/api/v1/kb", { headers: { ...user.headers, "if-none-match": '"kb-0"' } })).status).toBe(200);
    for (const accept of ["text/markdown;q=0", "*/*", "text/*", "application/json, text/markdown;q=0.5"]) {
      const res = await t.request("/api/v1/kb", { headers: { ...user.headers, accept } });
      expect(res.headers.get("content-type"), accept).toMatch(/^application\/json/);
    }
    for (const accept of ["text/markdown", "application/json;q=0.5, text/markdown", "text/markdown, application/json"]) {
      const res = await t.request("/api/v1/kb", { headers: { ...user.headers, accept } });
      expect(res.headers.get("content-type"), accept).toMatch(/^text\/markdown/);
    }
  });

  it("a PUT replaces the document at once on the writer's instance and within 10 minutes on others", async () => {
    const clock = fixedClock(Date.now());
    const writer = app(clock).t;
    const reader = app(clock).t;
    const admin = await signIn(writer, env.issuer, { admin: true });
    const user = await signIn(reader, env.issuer);
    const before = await getKb(reader, user);
    const content = `# Billing\n\n## Gift cards\nGift cards are redeemed in Wallet, Redeem. ${Math.random()}\n`;
    const res = await putKb(writer, admin, content);
    expect(res.status, await res.clone().text()).toBe(200);
    const written = (await res.json()) as KbDoc;
    expect(written).toMatchObject({ content, version: expect.any(Number) });
    expect(written.version).toBeGreaterThan(before.version);
    expect((await getKb(writer, admin)).content).toBe(content);
    expect((await getKb(reader, user)).version).toBe(before.version);
    clock.advance(10 * 60 * 1000);
    expect(await getKb(reader, user)).toEqual(written);
  });

  it("keeps earlier versions for admins, newest first and paged", async () => {
    const { t } = app();
    const admin = await signIn(t, env.issuer, { admin: true });
    expect((await putKb(t, admin, "# One\n\nfirst")).status).toBe(200);
    expect((await putKb(t, admin, "# Two\n\nsecond")).status).toBe(200);
    const res = await t.request("/api/v1/kb/versions?limit=2", { headers: admin.headers });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { versions: { version: number; current: boolean; bytes: number; createdBy: string | null }[]; nextCursor: string | null };
    expect(page.versions).toHaveLength(2);
    expect(page.versions[0]).toMatchObject({ current: true, bytes: "# Two\n\nsecond".length, createdBy: admin.id });
    expect(page.versions[1]).toMatchObject({ current: false, bytes: "# One\n\nfirst".length });
    expect(page.nextCursor).toBe(String(page.versions[1]!.version));
    const next = (await (await t.request(`/api/v1/kb/versions?limit=100&cursor=${page.nextCursor}`, { headers: admin.headers })).json()) as { versions: { version: number }[] };
    expect(next.versions.every((v) => v.version < page.versions[1]!.version)).toBe(true);
    expect(next.versions.at(-1)).toMatchObject({ version: 1, createdBy: null });
  });

  it("refuses empty or missing content, and non-admin writers", async () => {
    const { t } = app();
    const admin = await signIn(t, env.issuer, { admin: true });
    const user = await signIn(t, env.issuer);
    await expectError(await putKb(t, admin, "   "), 400, "invalid_input");
    await expectError(await putKb(t, admin, 42), 400, "invalid_input");
    await expectError(await putKb(t, user, "# Mine now"), 403, "forbidden");
    await expectError(await t.request("/api/v1/kb/versions", { headers: user.headers }), 403, "forbidden");
  });
});

describe("the asset list", () => {
  // A database of its own, so the list holds exactly this test's assets.
  const own = useTestEnvironment();

  it("pages newest first without a repeat, and refuses a bad limit or cursor", async () => {
    const t = buildTestApp({ database: own.db.database, issuer: own.issuer, tierLookup: ENTERPRISE, deps: { blobs: createMemoryBlobStore() } });
    const admin = await signIn(t, own.issuer, { admin: true });
    const user = await signIn(t, own.issuer);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await upload(t, admin, { name: `note-${i}.md`, type: "text/markdown", body: `# Note ${i}\n\nSome words about topic ${i}.` });
      expect(res.status).toBe(201);
      made.push(((await res.json()) as Asset).assetId);
    }
    expect((await assets(t, user, 2)).map((a) => a.assetId)).toEqual([...made].reverse());
    const first = (await (await t.request("/api/v1/kb/assets?limit=5", { headers: user.headers })).json()) as { nextCursor: string | null };
    expect(first.nextCursor).toBeNull();
    for (const query of ["limit=0", "limit=101", "limit=x", "cursor=not-an-id", "cursor=kba_%00"]) {
      await expectError(await t.request(`/api/v1/kb/assets?${query}`, { headers: user.headers }), 400, "invalid_input");
    }
  });
});

describe("knowledge base assets", () => {
  it("uploads Markdown: stored, listed with its manifest, indexed; delete removes all three", async () => {
    const { t, blobs } = app();
    const admin = await signIn(t, env.issuer, { admin: true });
    const user = await signIn(t, env.issuer);
    const res = await upload(t, admin, { name: "verify.md", type: "text/markdown", body: GUIDE_MD });
    expect(res.status, await res.clone().text()).toBe(201);
    const asset = (await res.json()) as Asset;
    const hash = Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(GUIDE_MD))).toString("hex");
    expect(asset).toMatchObject({ title: "Photo verification", source: "upload:verify.md", contentType: "text/markdown", bytes: GUIDE_MD.length, contentHash: hash, createdBy: admin.id });
    expect(asset.assetId).toMatch(/^kba_/);
    expect(asset.sections).toEqual([{ sectionId: `${asset.assetId}#photo-verification/how-to-verify-your-photos`, title: "Photo verification › How to verify your photos", chars: expect.any(Number) }]);
    expect(blobs.keys).toContain(`kb-assets/${asset.assetId}`);
    expect((await assets(t, user)).map((a) => a.assetId)).toContain(asset.assetId);
    expect(await search(t, "verify my photos with a selfie")).toContain(asset.sections[0]!.sectionId);

    const del = await t.request(`/api/v1/kb/assets/${asset.assetId}`, { method: "DELETE", headers: admin.headers });
    expect(del.status).toBe(204);
    expect((await assets(t, user)).map((a) => a.assetId)).not.toContain(asset.assetId);
    expect(blobs.keys).not.toContain(`kb-assets/${asset.assetId}`);
    expect(await search(t, "verify my photos with a selfie")).not.toContain(asset.sections[0]!.sectionId);
    await expectError(await t.request(`/api/v1/kb/assets/${asset.assetId}`, { method: "DELETE", headers: admin.headers }), 404, "not_found");
  });

  it("uses the admin's grounding text and title when given", async () => {
    const { t } = app();
    const admin = await signIn(t, env.issuer, { admin: true });
    const res = await upload(t, admin, { name: "notes.txt", type: "text/plain", body: "raw notes" }, { title: "Boosts", groundingText: "## What a boost does\nA boost shows your profile first in your area for 30 minutes." });
    expect(res.status, await res.clone().text()).toBe(201);
    const asset = (await res.json()) as Asset;
    expect(asset).toMatchObject({ title: "Boosts", contentType: "text/plain", bytes: "raw notes".length });
    expect(asset.sections.map((s) => s.title)).toEqual(["Boosts › What a boost does"]);
    expect(await search(t, "boost profile first")).toContain(asset.sections[0]!.sectionId);
  });

  it("fetches a URL (JSON or form) through the checked fetch, HTML becoming sections", async () => {
    const { t } = app();
    const admin = await signIn(t, env.issuer, { admin: true });
    const res = await t.request("/api/v1/kb/assets", json({ url: `http://docs.test:${docs.port}/travel.html` }, admin.headers));
    expect(res.status, await res.clone().text()).toBe(201);
    const asset = (await res.json()) as Asset;
    expect(asset).toMatchObject({ title: "Travel mode", source: `http://docs.test:${docs.port}/travel.html`, contentType: "text/html" });
    expect(asset.sections.map((s) => s.title)).toEqual(["Travel mode › Changing your city"]);
    const snapshot = await createKbCache(t.deps.clock).get(t.deps.database.session().db);
    const section = snapshot.sections.find((s) => s.id === asset.sections[0]!.sectionId);
    expect(section?.text).toBe("Premium members can set a travel city & appear there for 7 days.");

    const form = new FormData();
    form.set("url", `http://docs.test:${docs.port}/moved`);
    const viaForm = await t.request("/api/v1/kb/assets", { method: "POST", headers: admin.headers, body: form });
    expect(viaForm.status, await viaForm.clone().text()).toBe(201);
    expect((await viaForm.json()) as Asset).toMatchObject({ title: "Photo verification", source: `http://docs.test:${docs.port}/guide.md` });
  });

  it("names the type of a file sent without one (or as octet-stream) from its extension, and reads text/x-markdown as Markdown", async () => {
    const { t } = app();
    const admin = await signIn(t, env.issuer, { admin: true });
    const cases: [file: { name: string; type: string }, stored: string][] = [
      [{ name: "faq.MD", type: "application/octet-stream" }, "text/markdown"],
      [{ name: "faq.markdown", type: "" }, "text/markdown"],
      [{ name: "notes.txt", type: "application/octet-stream" }, "text/plain"],
      [{ name: "page.htm", type: "" }, "text/html"],
      [{ name: "faq.md", type: "text/x-markdown; charset=utf-8" }, "text/markdown"],
    ];
    for (const [file, stored] of cases) {
      const res = await upload(t, admin, { ...file, body: "# Boosts\nA boost shows your profile first in your area." });
      expect(res.status, `${file.name}: ${await res.clone().text()}`).toBe(201);
      expect(((await res.json()) as Asset).contentType).toBe(stored);
    }
    // An extension alone never makes another declared type acceptable.
    await expectError(await upload(t, admin, { name: "faq.md", type: "image/png", body: "# A\ntext" }), 400, "invalid_input");
    await expectError(await upload(t, admin, { name: "faq.pdf", type: "application/octet-stream", body: "# A\ntext" }), 400, "invalid_input");
  });

  it("refuses other file types, non-UTF-8 bytes, empty text, both or neither of file and url", async () => {
    const { t } = app();
    const admin = await signIn(t, env.issuer, { admin: true });
    await expectError(await upload(t, admin, { name: "a.png", type: "image/png", body: "png" }), 400, "invalid_input");
    await expectError(await upload(t, admin, { name: "a.txt", type: "text/plain", body: new Uint8Array([0xff, 0xfe, 0x00, 0xc3]) }), 400, "invalid_input");
    await expectError(await upload(t, admin, { name: "a.md", type: "text/markdown", body: "   \n" }), 400, "invalid_input");
    // Valid UTF-8 with NUL bytes is not a text document; nor is a file name with NUL, or one past 255 characters.
    const nul = await expectError(await upload(t, admin, { name: "a.txt", type: "text/plain", body: "# A\nbinary\u0000inside" }), 400, "invalid_input");
    expect(nul.message).toMatch(/NUL/);
    await expectError(await upload(t, admin, { name: "a\u0000b.md", type: "text/markdown", body: "# A\ntext" }), 400, "invalid_input");
    await expectError(await upload(t, admin, { name: `${"n".repeat(253)}.md`, type: "text/markdown", body: "# A\ntext" }), 400, "invalid_input");
    await expectError(await upload(t, admin, { name: "a.md", type: "text/markdown", body: "# A\ntext" }, { url: "http://docs.test/x" }), 400, "invalid_input");
    await expectError(await t.request("/api/v1/kb/assets", { method: "POST", headers: admin.headers, body: new FormData() }), 400, "invalid_input");
    await expectError(await t.request("/api/v1/kb/assets", json({}, admin.headers)), 400, "invalid_input");
    await expectError(await t.request("/api/v1/kb/assets", { method: "POST", headers: { ...admin.headers, "content-type": "text/plain" }, body: "hi" }), 400, "invalid_input");
  });

  it("takes a file of exactly 10 MiB and answers 413 above it", async () => {
    const { t } = app();
    const admin = await signIn(t, env.issuer, { admin: true });
    const head = "# Big\n\n";
    const under = `${head}${"word ".repeat((10 * 1024 * 1024 - head.length) / 5)}`.padEnd(10 * 1024 * 1024, ".");
    expect(under.length).toBe(10 * 1024 * 1024);
    const ok = await upload(t, admin, { name: "big.md", type: "text/markdown", body: under });
    expect(ok.status, await ok.clone().text()).toBe(201);
    const over = await upload(t, admin, { name: "bigger.md", type: "text/markdown", body: "x".repeat(10 * 1024 * 1024 + 1) });
    await expectError(over, 413, "payload_too_large");
  });

  it("keeps other JSON routes at 1 MiB", async () => {
    const { t } = app();
    const admin = await signIn(t, env.issuer, { admin: true });
    await expectError(await putKb(t, admin, "x".repeat(1024 * 1024 + 10)), 413, "payload_too_large");
  });
});
