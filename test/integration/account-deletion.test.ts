import { sql } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { profiles } from "../../src/db/schema";
import { queryRows } from "../../src/db/rows";
import { ledgerInvariants } from "../../src/services/wallet/ledger";
import { buildTestApp, fixedClock, type TestApp } from "../support/app";
import { DELETED_FRESH_MS } from "../../src/services/users/ensure-user";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, award, signIn, transfer, type Person } from "../support/people";
import { json } from "../support/users";

const env = useTestEnvironment();
let t: TestApp;
const db = () => env.db.database.db;

beforeAll(() => {
  t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE });
});
afterEach(async () => {
  expect(await ledgerInvariants(db())).toEqual({ totalBalance: 0, mismatchedAccounts: 0 });
});

/** A signed-in member with a visible profile at a spot of their own test's. */
async function member(spot: { latitude: number; longitude: number }, visibility = "visible"): Promise<Person> {
  const person = await signIn(t, env.issuer);
  const now = new Date();
  await db().insert(profiles).values({
    userId: person.id,
    displayName: `P ${person.id.slice(-6)}`,
    birthDate: "1994-03-03",
    gender: "woman",
    interestedIn: ["woman", "man", "nonbinary", "other"],
    latitude: spot.latitude,
    longitude: spot.longitude,
    country: "PT",
    visibility,
    createdAt: now,
    updatedAt: now,
    lastActiveAt: now,
  });
  return person;
}

const newSpot = () => ({ latitude: -60 + Math.random() * 120, longitude: -170 + Math.random() * 340 });
const del = (p: Person, body: unknown = { confirm: "DELETE" }) => t.request("/api/v1/account", { ...json(body, p.headers), method: "DELETE" });
const restore = (p: Person) => t.request("/api/v1/account/restore", { method: "POST", headers: p.headers });
const get = (p: Person, path: string) => t.request(path, { headers: p.headers });
const body = async (res: Response) => {
  const { requestId: _differs, ...rest } = (await res.json()) as Record<string, unknown>;
  return rest;
};

async function swipe(from: Person, to: Person, action: string) {
  const res = await t.request("/api/matching/swipe", json({ targetUserId: to.id, action }, from.headers));
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as { matched: boolean; matchId?: string };
}

async function discoverIds(who: Person): Promise<string[]> {
  const res = await get(who, "/api/v1/profiles/discover?limit=50");
  expect(res.status).toBe(200);
  return ((await res.json()) as { profiles: { userId: string }[] }).profiles.map((p) => p.userId);
}

async function matchIds(who: Person): Promise<string[]> {
  const res = await get(who, "/api/v1/matches");
  expect(res.status).toBe(200);
  return ((await res.json()) as { matches: { userId: string }[] }).matches.map((m) => m.userId);
}

async function winkSenders(who: Person): Promise<string[]> {
  const res = await get(who, "/api/v1/winks/received");
  expect(res.status).toBe(200);
  return ((await res.json()) as { winks: { fromUserId?: string; senderId?: string; userId?: string }[] }).winks.map((w) => w.fromUserId ?? w.senderId ?? w.userId ?? "");
}

describe("DELETE /api/v1/account", () => {
  it("makes the member vanish for everyone at once: discovery, matches, winks, profile reads, and a transfer to them answers as to an unknown member", async () => {
    const spot = newSpot();
    const [gone, matched, winked, stranger, admin] = [await member(spot), await member(spot), await member(spot), await member(spot), await signIn(t, env.issuer, { admin: true })];
    await swipe(gone, matched, "like");
    expect((await swipe(matched, gone, "like")).matched).toBe(true);
    expect((await t.request("/api/v1/winks", json({ toUserId: winked.id }, gone.headers))).status).toBe(201);
    await award(t, admin, stranger.id, 10);

    expect(await discoverIds(stranger)).toContain(gone.id);
    expect(await matchIds(matched)).toContain(gone.id);
    expect(await winkSenders(winked)).toContain(gone.id);
    expect((await get(stranger, `/api/v1/profile/${gone.id}`)).status).toBe(200);

    const res = await del(gone);
    expect(res.status, await res.clone().text()).toBe(200);
    const answer = (await res.json()) as { status: string; deletedAt: string; restorableUntil: string };
    expect(answer.status).toBe("deleted");
    expect(Date.parse(answer.restorableUntil) - Date.parse(answer.deletedAt)).toBe(30 * 86_400_000);

    expect(await discoverIds(stranger)).not.toContain(gone.id);
    expect(await matchIds(matched)).not.toContain(gone.id);
    expect(await winkSenders(winked)).not.toContain(gone.id);
    const unknownId = "usr_00000000000000000000000000";
    for (const path of [`/api/v1/profile/${gone.id}`]) {
      expect(await body(await get(stranger, path))).toEqual(await body(await get(stranger, path.replace(gone.id, unknownId))));
    }
    const toGone = await transfer(t, stranger, { toUserId: gone.id, amount: 1 });
    const toNobody = await transfer(t, stranger, { toUserId: unknownId, amount: 1 });
    expect(toGone.status).toBe(404);
    expect(await body(toGone)).toEqual(await body(toNobody));
    expect((await t.request("/api/v1/winks", json({ toUserId: gone.id }, stranger.headers))).status).toBe(404);
    expect((await t.request("/api/matching/swipe", json({ targetUserId: gone.id, action: "like" }, stranger.headers))).status).toBe(404);
  });

  it("refuses an admin's award to a deleted member (409), and takes it again after the restore", async () => {
    const [gone, admin] = [await signIn(t, env.issuer), await signIn(t, env.issuer, { admin: true })];
    expect((await del(gone)).status).toBe(200);
    const awardTo = (userId: string) => t.request("/api/v1/wallet/coins/award", json({ userId, amount: 50, reason: "goodwill" }, admin.headers));
    const refused = await awardTo(gone.id);
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ error: "conflict", code: 409 });
    const [wallet] = await queryRows<{ n: number }>(db(), sql`select count(*)::int as n from ledger_accounts where user_id = ${gone.id}`);
    expect(wallet?.n).toBe(0);
    expect((await awardTo("usr_00000000000000000000000000")).status).toBe(404);
    expect((await restore(gone)).status).toBe(200);
    const taken = await awardTo(gone.id);
    expect(taken.status).toBe(200);
    expect(await taken.json()).toMatchObject({ balance: 50, awardedAmount: 50 });
  });

  it("leaves the coin leaderboard at once, with or without a profile (a page cached before the deletion lasts its 30 seconds)", async () => {
    const fresh = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE });
    // A member without a profile has no visibility to hide: only the deletion itself keeps them off.
    const [gone, stays, admin] = [await signIn(t, env.issuer), await member(newSpot()), await signIn(fresh, env.issuer, { admin: true })];
    await award(fresh, admin, gone.id, 900_000);
    await award(fresh, admin, stays.id, 800_000);
    expect((await del(gone)).status).toBe(200);
    const res = await fresh.request("/api/v1/wallet/leaderboard?limit=100", { headers: stays.headers });
    expect(res.status).toBe(200);
    const ids = ((await res.json()) as { entries: { userId: string }[] }).entries.map((e) => e.userId);
    expect(ids).toContain(stays.id);
    expect(ids).not.toContain(gone.id);
  });

  it("answers every later request with the member's token 403 account_deleted, on this instance and on one that never saw the deletion", async () => {
    const gone = await member(newSpot());
    // A second instance sharing the store and the database, whose identity cache knows the member.
    const elsewhere = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, kv: t.deps.kv });
    expect((await elsewhere.request("/v1/auth/test", { headers: gone.headers })).status).toBe(200);
    expect((await del(gone)).status).toBe(200);
    for (const app of [t, elsewhere]) {
      for (const path of ["/v1/auth/test", "/api/v1/profile", "/api/v1/matches", "/api/v1/wallet/overview"]) {
        const res = await app.request(path, { headers: gone.headers });
        expect(res.status, path).toBe(403);
        expect(await res.json()).toMatchObject({ error: "account_deleted", code: 403 });
      }
    }
    expect((await del(gone)).status).toBe(403);
    // A fresh token of the same person: the database says deleted, whatever any cache remembers.
    const fresh = await env.issuer.sign({ sub: gone.sub, email: gone.email, roles: [] }, { expiresIn: "1h" });
    const res = await buildTestApp({ database: env.db.database, issuer: env.issuer }).request("/v1/auth/test", { headers: { authorization: `Bearer ${fresh}` } });
    expect(res.status).toBe(403);
  });

  it("answers an admin's API keys 403 account_deleted once the admin deleted their account", async () => {
    const admin = await signIn(t, env.issuer, { admin: true });
    const made = await t.request("/api/v1/admin/api-keys", json({ name: "soon gone" }, admin.headers));
    const { key } = (await made.json()) as { key: string };
    expect((await t.request("/v1/auth/test", { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    expect((await del(admin)).status).toBe(200);
    const res = await t.request("/v1/auth/test", { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: "account_deleted" });
  });

  it("needs confirm: \"DELETE\" exactly (400), and an API key may not delete (403)", async () => {
    const p = await member(newSpot());
    for (const bad of [{}, { confirm: "delete" }, { confirm: "DELETE", extra: 1 }, { confirm: true }]) {
      const res = await del(p, bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(await res.json()).toMatchObject({ error: "invalid_input" });
    }
    expect((await get(p, "/api/v1/profile")).status).toBe(200);
    const admin = await signIn(t, env.issuer, { admin: true });
    const { key } = (await (await t.request("/api/v1/admin/api-keys", json({ name: "k" }, admin.headers))).json()) as { key: string };
    const res = await t.request("/api/v1/account", { ...json({ confirm: "DELETE" }, { authorization: `Bearer ${key}` }), method: "DELETE" });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: "forbidden" });
    expect((await get(admin, "/api/v1/profile")).status).toBe(404);
  });
});

describe("POST /api/v1/account/restore", () => {
  it("brings the account back as it was within the grace period: visible again, matches and winks shown", async () => {
    const spot = newSpot();
    const [gone, matched, stranger] = [await member(spot), await member(spot), await member(spot)];
    await swipe(gone, matched, "like");
    await swipe(matched, gone, "like");
    expect((await del(gone)).status).toBe(200);
    const res = await restore(gone);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toMatchObject({ status: "active" });
    expect((await get(gone, "/api/v1/profile")).status).toBe(200);
    expect(await matchIds(matched)).toContain(gone.id);
    expect(await discoverIds(stranger)).toContain(gone.id);
  });

  it("lets the member back on another instance within 5 seconds of a restore", async () => {
    const clock = fixedClock(Date.now());
    const kv = t.deps.kv;
    const [here, there] = [0, 1].map(() => buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock, kv }));
    const p = await signIn(here!, env.issuer);
    expect((await here!.request("/api/v1/account", { ...json({ confirm: "DELETE" }, p.headers), method: "DELETE" })).status).toBe(200);
    expect((await there!.request("/v1/auth/test", { headers: p.headers })).status).toBe(403);
    expect((await here!.request("/api/v1/account/restore", { method: "POST", headers: p.headers })).status).toBe(200);
    expect((await here!.request("/v1/auth/test", { headers: p.headers })).status).toBe(200);
    clock.advance(DELETED_FRESH_MS + 1);
    expect((await there!.request("/v1/auth/test", { headers: p.headers })).status).toBe(200);
  });

  it("keeps a profile the member had hidden themselves hidden after a restore", async () => {
    const p = await member(newSpot(), "hidden");
    expect((await del(p)).status).toBe(200);
    expect((await restore(p)).status).toBe(200);
    const [row] = await queryRows<{ visibility: string }>(db(), sql`select visibility from profiles where user_id = ${p.id}`);
    expect(row?.visibility).toBe("hidden");
  });

  it("answers 409 for an account that is not deleted, and 403 to an API key", async () => {
    const p = await member(newSpot());
    const res = await restore(p);
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ error: "conflict" });
    const admin = await signIn(t, env.issuer, { admin: true });
    const { key } = (await (await t.request("/api/v1/admin/api-keys", json({ name: "k" }, admin.headers))).json()) as { key: string };
    expect((await t.request("/api/v1/account/restore", { method: "POST", headers: { authorization: `Bearer ${key}` } })).status).toBe(403);
  });

  it("refuses a restore once the grace period is over (403 account_deleted)", async () => {
    const p = await member(newSpot());
    expect((await del(p)).status).toBe(200);
    await db().execute(sql`update users set deleted_at = deleted_at - interval '30 days 1 second' where id = ${p.id}`);
    const res = await buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE }).request("/api/v1/account/restore", { method: "POST", headers: p.headers });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: "account_deleted" });
  });
});
