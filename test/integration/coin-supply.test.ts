import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "../../src/db/rows";
import { fixedClock } from "../../src/platform/clock";
import type { MintState } from "../../src/services/wallet/supply";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { award, idOf } from "../support/people";
import { json, newUser, type TestUser } from "../support/users";

// This file's database is its own: every figure below is exact, not a delta.
const env = useTestEnvironment();

const MINT_STATE = "/api/v1/admin/coins/mint/state";

async function state(t: TestApp, admin: TestUser): Promise<MintState> {
  const res = await t.request(MINT_STATE, { headers: admin.headers });
  expect(res.status).toBe(200);
  return (await res.json()) as MintState;
}

async function transfer(t: TestApp, from: TestUser, toUserId: string, amount: number): Promise<void> {
  const res = await t.request("/api/v1/wallet/transfer", json({ toUserId, amount }, from.headers));
  expect(res.status).toBe(200);
}

/** The figures straight from the tables, independently of the service's query. */
async function fromDatabase() {
  const [row] = await queryRows<{ wallets: string; awards: string; revenue: string }>(
    env.db.database.db,
    sql`select
          (select coalesce(sum(balance), 0) from ledger_accounts where kind = 'wallet')::text as wallets,
          (select coalesce(sum(p.amount), 0) from ledger_postings p join ledger_transactions t on t.id = p.transaction_id
             where t.type = 'award' and p.amount > 0)::text as awards,
          (select coalesce(sum(p.amount), 0) from ledger_postings p join ledger_transactions t on t.id = p.transaction_id
             where t.type = 'subscription' and p.account_id = 'sys_subscription_revenue')::text as revenue`,
  );
  return { wallets: Number(row?.wallets), awards: Number(row?.awards), revenue: Number(row?.revenue) };
}

describe("GET /api/v1/admin/coins/mint/state", () => {
  it("is for admins only", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const user = await newUser(env.issuer);
    const res = await t.request(MINT_STATE, { headers: user.headers });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: "forbidden", code: 403 });
    expect((await t.request(MINT_STATE)).status).toBe(401);
  });

  it("reports issued, circulating and spent coins from the ledger, with today's issue on the UTC day", async () => {
    // Late on 2 March (UTC); the test crosses midnight into 3 March.
    const clock = fixedClock(Date.parse("2026-03-02T23:58:00Z"));
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, clock });
    const admin = await newUser(env.issuer, { admin: true });
    const [alice, bob, carol] = await Promise.all([newUser(env.issuer), newUser(env.issuer), newUser(env.issuer)]);
    const [aliceId, bobId, carolId] = [await idOf(t, alice), await idOf(t, bob), await idOf(t, carol)];

    expect(await state(t, admin)).toEqual({
      totalIssued: 0,
      inCirculation: 0,
      spentOnSubscriptions: 0,
      issuedToday: 0,
      bySource: {},
      balanced: true,
      asOf: "2026-03-02T23:58:00.000Z",
    });

    // Yesterday (from the report's point of view): 1,300 coins, the last one a millisecond before midnight.
    await award(t, admin, aliceId, 1000, "supply test");
    clock.set(Date.parse("2026-03-02T23:59:59.999Z"));
    await award(t, admin, bobId, 300, "supply test");
    const lateNight = await state(t, admin);
    expect(lateNight).toMatchObject({ totalIssued: 1300, issuedToday: 1300, inCirculation: 1300, bySource: { award: 1300 }, balanced: true });

    // Today: 900 coins, the first exactly at midnight.
    clock.set(Date.parse("2026-03-03T00:00:00.000Z"));
    await award(t, admin, carolId, 700, "supply test");
    clock.set(Date.parse("2026-03-03T00:05:00Z"));
    await award(t, admin, aliceId, 200, "supply test");

    // Transfers move coins between wallets without changing the supply.
    await transfer(t, alice, bobId, 250);
    await transfer(t, bob, carolId, 100);
    const afterTransfers = await state(t, admin);
    expect(afterTransfers).toMatchObject({ totalIssued: 2200, inCirculation: 2200, spentOnSubscriptions: 0, issuedToday: 900, balanced: true });

    // A subscription takes coins out of circulation into revenue.
    const sub = await t.request("/api/v1/subscriptions", json({ planId: "premium" }, carol.headers));
    expect(sub.status).toBe(201);
    // A refused one (Bob holds 450) takes nothing.
    const refused = await t.request("/api/v1/subscriptions", json({ planId: "premium" }, bob.headers));
    expect(refused.status).toBe(422);

    const s = await state(t, admin);
    const d = await fromDatabase();
    expect(d).toEqual({ wallets: 1700, awards: 2200, revenue: 500 });
    expect(s).toEqual({
      totalIssued: 2200,
      inCirculation: 1700,
      spentOnSubscriptions: 500,
      issuedToday: 900,
      bySource: { award: 2200 },
      balanced: true,
      asOf: "2026-03-03T00:05:00.000Z",
    });
    expect(s.totalIssued).toBe(d.awards);
    expect(s.inCirculation).toBe(d.wallets);
    expect(s.spentOnSubscriptions).toBe(d.revenue);
    expect(s.totalIssued).toBe(s.inCirculation + s.spentOnSubscriptions);

    // Each wallet agrees with what the people did: alice 1000+200-250, bob 300+250-100, carol 700+100-500.
    const balances = await queryRows<{ user_id: string; balance: string }>(
      env.db.database.db,
      sql`select user_id, balance::text as balance from ledger_accounts where kind = 'wallet' order by user_id`,
    );
    expect(Object.fromEntries(balances.map((b) => [b.user_id, Number(b.balance)]))).toEqual({ [aliceId]: 950, [bobId]: 450, [carolId]: 300 });

    // The next UTC day nothing has been issued yet; the totals stay.
    clock.set(Date.parse("2026-03-04T00:00:00.000Z"));
    expect(await state(t, admin)).toMatchObject({ totalIssued: 2200, inCirculation: 1700, spentOnSubscriptions: 500, issuedToday: 0, balanced: true });
  });
});
