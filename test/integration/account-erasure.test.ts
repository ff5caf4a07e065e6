import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { Db } from "../../src/db/port";
import { queryRows } from "../../src/db/rows";
import { createMemoryStore } from "../../src/kv/memory";
import { fixedClock } from "../../src/platform/clock";
import { GRACE_MS } from "../../src/services/account/grace";
import { ERASURE_BATCH, FORFEITED_ACCOUNT, MEMBER_ROWS, TOMBSTONED, eraseDeletedAccounts } from "../../src/services/account/erasure";
import { MEMBER_COLUMNS } from "../../src/services/account/member-columns";
import { memberStoreKeys } from "../../src/services/account/member-keys";
import { profileCacheKey } from "../../src/services/translations/member-text";
import { ledgerInvariants } from "../../src/services/wallet/ledger";
import { buildTestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { schemaMemberColumns } from "../support/member-columns";
import { FILLS } from "../support/member-fill";
import { ENTERPRISE, award, signIn, transfer, type Person } from "../support/people";
import { randomSuffix } from "../support/services";
import { json } from "../support/users";

const env = useTestEnvironment();
const db = (): Db => env.db.database.db;
const HOUR = 3_600_000;

/**
 * An app on a frozen clock with the in-process store on the same clock: once the clock passes the
 * grace period, whatever only expires is gone, and whatever is left must have been erased.
 */
function setup() {
  const clock = fixedClock(Date.now());
  const kv = createMemoryStore({ clock });
  const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock, kv });
  const erase = () => eraseDeletedAccounts({ db: db(), kv, ids: t.deps.ids, logger: t.deps.logger }, clock.now(), ERASURE_BATCH);
  return { clock, kv, t, erase };
}

async function balanceOf(accountId: string): Promise<number> {
  const [row] = await queryRows<{ balance: string }>(db(), sql`select balance::text as balance from ledger_accounts where id = ${accountId}`);
  return Number(row?.balance ?? 0);
}

describe("erasure after the grace period", () => {
  it("keeps the member restorable for 30 days, then erases them: coins forfeited by a posting, ledger balanced, and the same subject signs in as a new, empty member", async () => {
    const { clock, t, erase } = setup();
    const [gone, friend, admin] = [await signIn(t, env.issuer), await signIn(t, env.issuer), await signIn(t, env.issuer, { admin: true })];
    const profile = { displayName: "Erasable", birthDate: "1990-01-01", gender: "other", interestedIn: ["woman"] };
    for (const p of [gone, friend]) expect((await t.request("/api/v1/profile", { ...json(profile, p.headers), method: "PUT" })).status).toBe(201);
    await t.request("/api/matching/swipe", json({ targetUserId: friend.id, action: "like" }, gone.headers));
    await t.request("/api/matching/swipe", json({ targetUserId: gone.id, action: "like" }, friend.headers));
    await award(t, admin, gone.id, 100);
    await award(t, admin, friend.id, 10);
    expect((await transfer(t, gone, { toUserId: friend.id, amount: 30, note: "for dinner with Erasable" })).status).toBe(200);
    expect((await transfer(t, friend, { toUserId: gone.id, amount: 5, note: "thanks" })).status).toBe(200);
    const forfeitedBefore = await balanceOf(FORFEITED_ACCOUNT);

    expect((await t.request("/api/v1/account", { ...json({ confirm: "DELETE" }, gone.headers), method: "DELETE" })).status).toBe(200);
    clock.advance(GRACE_MS - HOUR);
    expect(await erase()).toBe(0);
    expect(await queryRows(db(), sql`select id from users where id = ${gone.id}`)).toHaveLength(1);

    clock.advance(2 * HOUR);
    expect(await erase()).toBe(1);
    expect(await queryRows(db(), sql`select id from users where id = ${gone.id} or subject = ${gone.sub}`)).toEqual([]);
    expect(await balanceOf(FORFEITED_ACCOUNT)).toBe(forfeitedBefore + 75);
    expect(await ledgerInvariants(db())).toEqual({ totalBalance: 0, mismatchedAccounts: 0 });
    const [tomb] = await queryRows<{ user_id: string; balance: string }>(
      db(),
      sql`select a.user_id, a.balance::text as balance from ledger_accounts a join ledger_postings p on p.account_id = a.id join ledger_transactions x on x.id = p.transaction_id
          where x.type = 'forfeiture' and a.kind = 'wallet' and p.amount = -75`,
    );
    expect(tomb?.user_id).toMatch(/^tmb_/);
    expect(tomb?.balance).toBe("0");
    // Both transfers stay, without their notes.
    const notes = await queryRows<{ note: string | null }>(
      db(),
      sql`select x.note from ledger_transactions x join ledger_postings p on p.transaction_id = x.id join ledger_accounts a on a.id = p.account_id where a.user_id = ${tomb?.user_id} and x.type = 'transfer'`,
    );
    expect(notes).toEqual([{ note: null }, { note: null }]);
    expect(await erase()).toBe(0);

    // Real time again, so a fresh token verifies, on an instance that never saw the member (a
    // token issued in the same second as the first would be the same token to this one's cache):
    // the same subject is a new member with nothing.
    clock.set(Date.now());
    const token = await env.issuer.sign({ sub: gone.sub, email: gone.email, roles: [] }, { expiresIn: "1h" });
    const again = { ...gone, token, headers: { authorization: `Bearer ${token}` } };
    const later = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock, kv: t.deps.kv });
    const who = await later.request("/v1/auth/test", { headers: again.headers });
    expect(who.status, await who.clone().text()).toBe(200);
    const newId = ((await who.json()) as { user: { id: string } }).user.id;
    expect(newId).not.toBe(gone.id);
    expect((await later.request("/api/v1/profile", { headers: again.headers })).status).toBe(404);
    const overview = (await (await later.request("/api/v1/wallet/overview", { headers: again.headers })).json()) as { balance: number };
    expect(overview.balance).toBe(0);
    const matches = (await (await t.request("/api/v1/matches", { headers: friend.headers })).json()) as { matches: unknown[] };
    expect(matches.matches).toEqual([]);
  });
});

describe("nothing forgotten", () => {
  it("every column referring to a user is handled by the erasure and filled by this test", async () => {
    const handled = new Set([...MEMBER_ROWS.flatMap((m) => m.columns.map((c) => `${m.table}.${c}`)), ...TOMBSTONED.map((c) => `${c.table}.${c.column}`)]);
    // users.id is the row itself; columns the erasure deals with otherwise say how in MEMBER_COLUMNS.
    const columns = (await schemaMemberColumns(db())).filter((c) => typeof MEMBER_COLUMNS[c]?.erasure !== "object");
    expect(columns.length).toBeGreaterThan(20);
    // A new column here fails until services/account/erasure.ts deletes or tombstones it.
    expect(columns.filter((c) => !handled.has(c)), "not handled by the erasure").toEqual([]);
    // ... and until test/support/member-fill.ts fills it, so the test below proves it.
    expect(columns.filter((c) => FILLS[c] === undefined), "not filled by the erasure test").toEqual([]);
  });

  it("leaves nothing in any table or store key that identifies an erased member, except the anonymised accounting rows", async () => {
    const { clock, kv, t, erase } = setup();
    const gone: Person = await signIn(t, env.issuer, { admin: true });
    const [friend, admin] = [await signIn(t, env.issuer), await signIn(t, env.issuer, { admin: true })];
    const mark = `${randomSuffix()}${randomSuffix()}`;
    const displayName = `Erasable ${mark}`;
    const bio = `Bio of the erasable member ${mark}`;
    const profile = { displayName, birthDate: "1990-01-01", gender: "other", interestedIn: ["woman"], bio, photos: [`https://photos.example/${mark}.jpg`] };
    expect((await t.request("/api/v1/profile", { ...json(profile, gone.headers), method: "PUT" })).status).toBe(201);
    await award(t, admin, gone.id, 40);
    expect((await transfer(t, gone, { toUserId: friend.id, amount: 15, note: `from ${displayName}` })).status).toBe(200);
    // As an admin, into someone else's wallet: a transaction the member acted in without their wallet.
    await award(t, gone, friend.id, 1, "goodwill bonus");
    const keyRes = await t.request("/api/v1/admin/api-keys", json({ name: "erasure test key" }, gone.headers));
    expect(keyRes.status).toBe(201);
    const { key } = (await keyRes.json()) as { key: string };
    expect((await t.request("/v1/auth/test", { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    expect((await t.request("/api/v1/vouchers/redeem", json({ code: "0000-0000-0000-0000" }, gone.headers))).status).toBe(404);
    await db().execute(
      sql`insert into translation_cache (kind, cache_key, target_language, result, created_at)
          values ('profile', ${await profileCacheKey({ bio, tagline: null, interests: [] })}, 'fr', ${JSON.stringify({ translated: { bio: `${bio} (fr)` } })}::jsonb, now())`,
    );

    // Someone on either side of the member in id order, for the pair tables.
    const [low, high] = [`usr_00${mark}`, `usr_zz${mark}`];
    for (const id of [low, high]) await db().execute(sql`insert into users (id, subject) values (${id}, ${`pair-${id}`})`);
    const ids = { u: gone.id, low, high, email: gone.email, at: new Date(clock.now()).toISOString() };
    for (const [column, fill] of Object.entries(FILLS)) {
      if (fill !== "api") for (const statement of fill(ids)) await db().execute(statement);
      const [table, name] = column.split(".") as [string, string];
      const [found] = await queryRows<{ n: string }>(db(), sql`select count(*)::text as n from ${sql.raw(`"${table}"`)} where ${sql.raw(`"${name}"`)} = ${gone.id}`);
      expect(Number(found?.n), `${column} holds the member`).toBeGreaterThan(0);
    }
    const [{ id: keyId } = { id: "" }] = await queryRows<{ id: string }>(db(), sql`select id from api_keys where created_by = ${gone.id} and name = 'erasure test key'`);

    expect((await t.request("/api/v1/account", { ...json({ confirm: "DELETE" }, gone.headers), method: "DELETE" })).status).toBe(200);
    // Every store key the modules keep per member as of when the erasure runs, held past it
    // where the module had not written it (the deletion marker it wrote stays as it is).
    const eraseAt = clock.now() + GRACE_MS + HOUR;
    const stored = memberStoreKeys(gone.id, [keyId], eraseAt);
    for (const k of stored.keys) if ((await kv.get(k).catch(() => "set")) === null) await kv.set(k, JSON.stringify({ userId: gone.id }));
    for (const [k, member] of stored.sets) await kv.zadd(k, eraseAt + GRACE_MS, member);
    clock.set(eraseAt);
    expect(await erase()).toBe(1);

    const needles = [gone.id, gone.email, gone.sub, displayName, bio, mark.slice(0, 12), "+254700000001", "Gone Person", "hooks.example/gone"];
    const textColumns = await queryRows<{ table_name: string; column_name: string }>(
      db(),
      sql`select table_name, column_name from information_schema.columns c
          where table_schema = 'public' and data_type in ('text', 'character varying', 'jsonb', 'json', 'ARRAY')
            and exists (select 1 from information_schema.tables t where t.table_schema = 'public' and t.table_name = c.table_name and t.table_type = 'BASE TABLE')`,
    );
    const left: string[] = [];
    for (const { table_name, column_name } of textColumns) {
      for (const needle of needles) {
        // The pair helpers' own ids carry the mark; they are other people.
        const [row] = await queryRows<{ n: string }>(
          db(),
          sql`select count(*)::text as n from ${sql.raw(`"${table_name}"`)} where strpos(${sql.raw(`"${column_name}"`)}::text, ${needle}) > 0
              and ${sql.raw(`"${column_name}"`)}::text not in (${low}, ${high}, ${`pair-${low}`}, ${`pair-${high}`})`,
        );
        if (Number(row?.n) > 0) left.push(`${table_name}.${column_name} holds ${needle === gone.id ? "the member's id" : JSON.stringify(needle)}`);
      }
    }
    expect(left).toEqual([]);
    const inStore = kv.contents().filter((e) => needles.some((n) => e.key.includes(n) || e.value.includes(n)));
    expect(inStore).toEqual([]);

    // What stays is the accounting, under a tombstone: the wallet, its postings, the payment.
    const [payment] = await queryRows<{ user_id: string; details: unknown }>(db(), sql`select p.user_id, p.details from payments p join users u on u.id = p.user_id where u.erased_at is not null and p.currency = 'USD'`);
    expect(payment?.user_id).toMatch(/^tmb_/);
    expect(payment?.details).toEqual({});
    const [tombstone] = await queryRows<{ email: string | null; display_name: string | null }>(db(), sql`select email, display_name from users where id = ${payment?.user_id}`);
    expect(tombstone).toEqual({ email: null, display_name: null });
    expect(await ledgerInvariants(db())).toEqual({ totalBalance: 0, mismatchedAccounts: 0 });
  });
});
