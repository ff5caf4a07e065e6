import { describe, expect, it } from "vitest";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { newUser, type TestUser } from "../support/users";

// The regions document is one per database: this file's tests run one after another on theirs.
const env = useTestEnvironment();
const ADMIN_PATH = "/api/v1/admin/config/maps/regions";

interface Config {
  enabled: string[];
  version: number;
  catalog: { code: string; name: string; enabled: boolean }[];
}

const put = (t: TestApp, admin: TestUser, enabled: unknown, ifMatch?: string) =>
  t.request(ADMIN_PATH, { method: "PUT", headers: { ...admin.headers, "content-type": "application/json", ...(ifMatch === undefined ? {} : { "if-match": ifMatch }) }, body: JSON.stringify({ enabled }) });

async function read(t: TestApp, admin: TestUser): Promise<{ body: Config; etag: string }> {
  const res = await t.request(ADMIN_PATH, { headers: admin.headers });
  expect(res.status).toBe(200);
  return { body: (await res.json()) as Config, etag: res.headers.get("etag") ?? "" };
}

describe("maps regions", () => {
  it("serves the full ISO 3166-1 catalog, replaces the enabled set under If-Match, and refuses a stale write", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const [alice, bob] = [await newUser(env.issuer, { admin: true }), await newUser(env.issuer, { admin: true })];
    const member = await newUser(env.issuer);

    const first = await read(t, alice);
    expect(first.body.catalog.length).toBeGreaterThanOrEqual(249);
    const names = new Intl.DisplayNames(["en"], { type: "region" });
    for (const code of ["DE", "KE", "BR", "JP", "ZA"]) expect(first.body.catalog.find((r) => r.code === code)?.name).toBe(names.of(code));
    expect(first.body.catalog.every((r) => /^[A-Z]{2}$/.test(r.code))).toBe(true);
    expect(first.etag).toBe(`"maps-regions-${first.body.version}"`);

    // Both admins read the same version; Alice writes first, Bob's write is refused instead of overwriting hers.
    const bobsView = await read(t, bob);
    const alices = await put(t, alice, ["KE", "DE", "KE"], first.etag);
    expect(alices.status).toBe(200);
    expect(await alices.json()).toMatchObject({ enabled: ["DE", "KE"], version: first.body.version + 1 });
    expect(alices.headers.get("etag")).toBe(`"maps-regions-${first.body.version + 1}"`);
    const bobs = await put(t, bob, ["FR"], bobsView.etag);
    expect(bobs.status).toBe(412);
    expect(((await bobs.json()) as { error: string }).error).toBe("precondition_failed");
    expect(bobs.headers.get("etag")).toBe(alices.headers.get("etag"));

    const after = await read(t, bob);
    expect(after.body.enabled).toEqual(["DE", "KE"]);
    expect(after.body.catalog.filter((r) => r.enabled).map((r) => r.code)).toEqual(["DE", "KE"]);

    // Members read the enabled set, with a conditional GET.
    const pub = await t.request("/api/v1/config/maps/regions", { headers: member.headers });
    expect(pub.status).toBe(200);
    expect(await pub.json()).toEqual({ regions: [{ code: "DE", name: "Germany" }, { code: "KE", name: "Kenya" }], version: after.body.version });
    const again = await t.request("/api/v1/config/maps/regions", { headers: { ...member.headers, "if-none-match": pub.headers.get("etag") ?? "" } });
    expect(again.status).toBe(304);

    // The write is in the audit log with what changed.
    const audit = await t.request(`/api/v1/admin/audit?action=maps_regions.replace`, { headers: alice.headers });
    const entries = ((await audit.json()) as { entries: { details: Record<string, unknown>; requestId: string }[] }).entries;
    expect(entries[0]).toMatchObject({ details: { added: ["DE", "KE"], removed: [] }, requestId: alices.headers.get("x-request-id") });

    // Two writes at once naming the same version: exactly one lands.
    const current = await read(t, alice);
    const racing = await Promise.all([put(t, alice, ["US"], current.etag), put(t, bob, ["GB"], current.etag)]);
    expect(racing.map((r) => r.status).sort()).toEqual([200, 412]);
  });

  it("answers 428 without If-Match and 400 naming each unknown code, changing nothing", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const admin = await newUser(env.issuer, { admin: true });
    const before = await read(t, admin);
    const missing = await put(t, admin, ["DE"]);
    expect(missing.status).toBe(428);
    expect(((await missing.json()) as { error: string }).error).toBe("precondition_required");
    const bad = await put(t, admin, ["DE", "de", "ZZ", "UK"], before.etag);
    expect(bad.status).toBe(400);
    const body = (await bad.json()) as { message: string; details: { path: string }[] };
    expect(body.message).toContain("de, ZZ, UK");
    expect(body.details.map((d) => d.path)).toEqual(["enabled.1", "enabled.2", "enabled.3"]);
    expect((await put(t, admin, "DE", before.etag)).status).toBe(400);
    expect((await put(t, admin, ["DE"], '"something-else"')).status).toBe(412);
    expect((await read(t, admin)).body.version).toBe(before.body.version);
    // `*` is an explicit "whatever is current".
    expect((await put(t, admin, [], "*")).status).toBe(200);
  });

  it("keeps the admin document from members and strangers", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const member = await newUser(env.issuer);
    expect((await t.request(ADMIN_PATH, { headers: member.headers })).status).toBe(403);
    expect((await put(t, member, ["DE"], "*")).status).toBe(403);
    expect((await t.request("/api/v1/config/maps/regions")).status).toBe(401);
  });
});
