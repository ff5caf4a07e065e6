import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "../../src/db/rows";
import type { FinanceMetrics } from "../../src/services/finance/metrics";
import { buildTestApp, fixedClock, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { expectError } from "../support/errors";
import { financeWriter } from "../support/finance";
import { ENTERPRISE, signIn } from "../support/people";
import { json } from "../support/users";

const PATH = "/api/admin/finance/metrics";
// Noon on 10 March 2026 (UTC): the window 8–10 March ends today.
const NOW = Date.parse("2026-03-10T12:00:00Z");
type Env = ReturnType<typeof useTestEnvironment>;

function app(env: Env): TestApp {
  return buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock: fixedClock(NOW) });
}

async function metrics(t: TestApp, headers: Record<string, string>, query = "?from=2026-03-08&to=2026-03-10"): Promise<FinanceMetrics> {
  const res = await t.request(`${PATH}${query}`, { headers });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as FinanceMetrics;
}

const CLEAN = { ok: true, ledgerBalanced: true, balanceSum: 0, unbalancedTransactions: 0, missingCredits: 0, duplicateCredits: 0, amountMismatches: 0, creditsWithoutPayment: 0 };

// Each describe has a database of its own: every figure below is exact.
describe("finance metrics over known records", () => {
  const env = useTestEnvironment();
  it("sums payments, coin flows, subscriptions, the liability and the per-day series of the window", async () => {
    const t = app(env);
    const admin = await signIn(t, env.issuer, { admin: true });
    const [alice, bob, carol] = await Promise.all([signIn(t, env.issuer), signIn(t, env.issuer), signIn(t, env.issuer)]);
    const w = financeWriter(env.db.database.db);
    const wallet = await w.wallets([alice.id, bob.id, carol.id]);
    const [a, b, c] = [wallet.get(alice.id), wallet.get(bob.id), wallet.get(carol.id)] as [string, string, string];

    // Before the window: counted in the liability only.
    await w.payment({ userId: carol.id, wallet: c, provider: "card-a", currency: "USD", amount: 1000, coins: 1000, status: "completed", createdAt: "2026-01-01T10:00:00Z", completedAt: "2026-01-01T10:01:00Z" });
    await w.award(c, 7, "2026-01-02T00:00:00Z");
    // 8 March: two credits; a payment made on the 7th but completed just after midnight counts on the 8th.
    await w.payment({ userId: alice.id, wallet: a, provider: "card-a", currency: "USD", amount: 500, coins: 500, status: "completed", createdAt: "2026-03-08T09:59:00Z", completedAt: "2026-03-08T10:00:00Z" });
    await w.payment({ userId: bob.id, wallet: b, provider: "card-b", currency: "KES", amount: 1000.5, coins: 10, status: "completed", createdAt: "2026-03-07T23:59:00Z", completedAt: "2026-03-08T00:00:30Z" });
    // 9 March: one more credit, an award, a transfer and three payments that did not complete.
    await w.payment({ userId: alice.id, wallet: a, provider: "card-a", currency: "USD", amount: 250, coins: 250, status: "completed", createdAt: "2026-03-09T08:00:00Z", completedAt: "2026-03-09T08:05:00Z" });
    await w.payment({ userId: bob.id, provider: "crypto", currency: "BTC", amount: 0.001, coins: 40, status: "pending", createdAt: "2026-03-09T09:00:00Z" });
    await w.payment({ userId: bob.id, provider: "card-b", currency: "KES", amount: 300, coins: 3, status: "failed", createdAt: "2026-03-09T09:30:00Z" });
    await w.payment({ userId: carol.id, provider: "mobile-money", currency: "KES", amount: 200, coins: 2, status: "expired", createdAt: "2026-03-09T23:59:59Z" });
    await w.award(b, 100, "2026-03-09T12:00:00Z");
    await w.transfer(a, b, 200, "2026-03-09T13:00:00Z");
    // 10 March: a transfer, and Alice buys premium through the API (the clock's now).
    await w.transfer(b, c, 30, "2026-03-10T01:00:00Z");
    const sub = await t.request("/api/v1/subscriptions", json({ planId: "premium" }, alice.headers));
    expect(sub.status, await sub.clone().text()).toBe(201);
    // After the window: not counted.
    await w.award(c, 5, "2026-03-11T00:00:00Z");

    const m = await metrics(t, admin.headers);
    expect(m).toMatchObject({ from: "2026-03-08", to: "2026-03-10", asOf: new Date(NOW).toISOString() });
    expect(m.payments.received).toEqual([
      { provider: "card-a", currency: "USD", count: 2, coins: 750, amount: "750" },
      { provider: "card-b", currency: "KES", count: 1, coins: 10, amount: "1000.5" },
    ]);
    // By the day they were made: the card-b payment of the 7th is outside.
    expect(m.payments.byProvider).toEqual([
      { provider: "card-a", pending: 0, completed: 2, failed: 0, expired: 0 },
      { provider: "card-b", pending: 0, completed: 0, failed: 1, expired: 0 },
      { provider: "crypto", pending: 1, completed: 0, failed: 0, expired: 0 },
      { provider: "mobile-money", pending: 0, completed: 0, failed: 0, expired: 1 },
    ]);
    expect(m.payments.totals).toEqual({ pending: 1, completed: 2, failed: 1, expired: 1, coinsReceived: 760 });
    expect(m.coins).toEqual({ minted: 860, mintedBySource: { funding: 760, award: 100 }, awarded: 100, fromPayments: 760, fromVouchers: 0, spentOnSubscriptions: 500, transferred: 230, transfers: 2 });
    expect(m.subscriptions).toEqual({
      active: [
        { planId: "premium", count: 1 },
        { planId: "enterprise", count: 0 },
      ],
      revenue: [
        { planId: "premium", charges: 1, coins: 500 },
        { planId: "enterprise", charges: 0, coins: 0 },
      ],
    });
    // Alice 750 - 200 - 500, Bob 10 + 100 + 200 - 30, Carol 1000 + 7 + 30 + 5.
    expect(m.outstanding).toEqual({ coins: 50 + 280 + 1042, wallets: 3 });
    expect(m.reconciliation).toEqual({ ...CLEAN, paymentsChecked: 3 });
    expect(m.series).toEqual([
      { date: "2026-03-08", paymentsCompleted: 2, coinsReceived: 510, minted: 510, awarded: 0, spentOnSubscriptions: 0, transferred: 0 },
      { date: "2026-03-09", paymentsCompleted: 1, coinsReceived: 250, minted: 350, awarded: 100, spentOnSubscriptions: 0, transferred: 200 },
      { date: "2026-03-10", paymentsCompleted: 0, coinsReceived: 0, minted: 0, awarded: 0, spentOnSubscriptions: 500, transferred: 30 },
    ]);

    // Closed days were rolled up by that read, today was not; a transaction stamped on a closed day
    // that commits afterwards changes the day's count, so the day is summed again.
    const rolled = await queryRows<{ day: string }>(env.db.database.db, sql`select distinct to_char(day, 'YYYY-MM-DD') as day from finance_ledger_days order by 1`);
    expect(rolled.map((r) => r.day)).toEqual(["2026-03-08", "2026-03-09"]);
    await w.award(b, 9, "2026-03-09T23:00:00Z");
    const again = await metrics(t, admin.headers);
    expect(again.coins).toMatchObject({ minted: 869, awarded: 109 });
    expect(again.series[1]).toMatchObject({ date: "2026-03-09", minted: 359, awarded: 109 });

    // Readers that find the same stale days at once store the same rollup and agree.
    await w.award(c, 4, "2026-03-08T06:00:00Z");
    const together = await Promise.all(Array.from({ length: 4 }, () => metrics(t, admin.headers)));
    for (const r of together) expect(r.coins).toMatchObject({ minted: 873, awarded: 113 });

    // One day: only its own figures.
    const ninth = await metrics(t, admin.headers, "?from=2026-03-09&to=2026-03-09");
    expect(ninth.coins).toMatchObject({ minted: 359, transferred: 200, transfers: 1, spentOnSubscriptions: 0 });
    expect(ninth.series.map((d) => d.date)).toEqual(["2026-03-09"]);
  });
});

describe("finance metrics reconciliation", () => {
  const env = useTestEnvironment();
  it("counts credits that are missing, doubled, of the wrong amount or without a payment", async () => {
    const t = app(env);
    const admin = await signIn(t, env.issuer, { admin: true });
    const [alice, bob] = await Promise.all([signIn(t, env.issuer), signIn(t, env.issuer)]);
    const w = financeWriter(env.db.database.db);
    const wallet = await w.wallets([alice.id, bob.id]);
    const [a, b] = [wallet.get(alice.id), wallet.get(bob.id)] as [string, string];
    const base = { provider: "card-a", currency: "USD", status: "completed", createdAt: "2026-03-09T10:00:00Z" };
    const doubled = await w.payment({ ...base, userId: alice.id, wallet: a, amount: 40, coins: 40 });
    await w.payment({ ...base, userId: bob.id, wallet: b, amount: 60, coins: 60 });
    expect((await metrics(t, admin.headers)).reconciliation).toEqual({ ...CLEAN, paymentsChecked: 2 });

    await w.doubleCredit(doubled.ledgerTransactionId as string, a, 40, "2026-03-09T10:00:00Z");
    await w.uncreditedPayment(bob.id, 25, "2026-03-09T11:00:00Z");
    await w.payment({ ...base, userId: bob.id, wallet: b, amount: 90, coins: 90, credit: 80 });
    await w.fundingCredit(a, 15, "2026-03-10T09:00:00Z");
    // Outside the window: not checked.
    await w.uncreditedPayment(bob.id, 5, "2026-02-01T11:00:00Z");

    const m = await metrics(t, admin.headers);
    expect(m.reconciliation).toEqual({ ...CLEAN, ok: false, paymentsChecked: 4, missingCredits: 1, duplicateCredits: 1, amountMismatches: 1, creditsWithoutPayment: 1 });
    // The ledger itself stays balanced: every statement's postings sum to zero.
    expect(m.reconciliation.ledgerBalanced).toBe(true);
    expect(m.coins.fromPayments).toBe(40 + 40 + 60 + 80 + 15);
  });
});

describe("finance metrics window and access", () => {
  const env = useTestEnvironment();
  it("defaults to the last 30 UTC days, today included, with a zero for every day", async () => {
    const t = app(env);
    const admin = await signIn(t, env.issuer, { admin: true });
    const m = await metrics(t, admin.headers, "");
    expect(m).toMatchObject({ from: "2026-02-09", to: "2026-03-10" });
    expect(m.series).toHaveLength(30);
    expect(m.series[0]).toEqual({ date: "2026-02-09", paymentsCompleted: 0, coinsReceived: 0, minted: 0, awarded: 0, spentOnSubscriptions: 0, transferred: 0 });
    expect(m.payments.received).toEqual([]);
    expect(m.reconciliation).toEqual({ ...CLEAN, paymentsChecked: 0 });
    // `to` alone: the 30 days ending there.
    expect(await metrics(t, admin.headers, "?to=2026-01-30")).toMatchObject({ from: "2026-01-01", to: "2026-01-30" });
    // 366 days is the widest window.
    expect((await metrics(t, admin.headers, "?from=2025-03-10&to=2026-03-10")).series).toHaveLength(366);
  });

  it("answers 400 for a malformed date, an impossible date, a reversed or too wide window", async () => {
    const t = app(env);
    const admin = await signIn(t, env.issuer, { admin: true });
    const bad = async (query: string, path: string) => {
      const body = await expectError(await t.request(`${PATH}${query}`, { headers: admin.headers }), 400, "invalid_input");
      expect(body.details).toEqual([expect.objectContaining({ path })]);
      return body;
    };
    await bad("?from=yesterday", "from");
    await bad("?from=2026-02-30&to=2026-03-10", "from");
    await bad("?to=2026-3-1", "to");
    await bad("?from=2026-03-10T00:00:00Z", "from");
    expect((await bad("?from=2026-03-10&to=2026-03-09", "from")).message).toBe("from must not be after to");
    // from alone runs to today: a future from is after it.
    await bad("?from=2026-03-11", "from");
    expect((await bad("?from=2025-03-09&to=2026-03-10", "to")).message).toContain("367 days");
  });

  it("is for admins: a member gets 403, no token 401, an admin API key 200", async () => {
    const t = app(env);
    const admin = await signIn(t, env.issuer, { admin: true });
    const member = await signIn(t, env.issuer);
    await expectError(await t.request(PATH, { headers: member.headers }), 403, "forbidden");
    await expectError(await t.request(PATH), 401, "unauthorized");
    const created = await t.request("/api/v1/admin/api-keys", json({ name: "finance" }, admin.headers));
    expect(created.status).toBe(201);
    const { key } = (await created.json()) as { key: string };
    expect((await metrics(t, { authorization: `Bearer ${key}` }, "?from=2026-03-01&to=2026-03-10")).series).toHaveLength(10);
  });
});
