import { eq, sql } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { queryRows } from "../../src/db/rows";
import { idempotencyKeys } from "../../src/db/schema";
import { createMemoryStore } from "../../src/kv/memory";
import { fixedClock } from "../../src/platform/clock";
import { sha256Hex } from "../../src/platform/hash";
import type { Random } from "../../src/platform/ids";
import { canonicalBody } from "../../src/http/idempotency";
import { KEY_RETENTION_MS, STALE_IN_FLIGHT_MS } from "../../src/services/idempotency/keys";
import { ledgerInvariants } from "../../src/services/wallet/ledger";
import { buildTestApp, type TestApp, type TestAppOptions } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, award, overview, signIn, transfer, walletRow, type Person } from "../support/people";
import { lockWaiters, withPgClient } from "../support/pg";
import { json } from "../support/users";
import { expectError } from "../support/errors";

const env = useTestEnvironment();
// Whatever a test did through the API or the database, the ledger still adds up.
afterEach(async () => {
  expect(await ledgerInvariants(env.db.database.db)).toEqual({ totalBalance: 0, mismatchedAccounts: 0 });
});

/** An app whose callers are all on the enterprise tier (2,000 requests a minute), unless a test needs the real tier. */
function app(extra: Partial<TestAppOptions> = {}): TestApp {
  return buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, ...extra });
}

/** A new user, created in the database by their first request; `id` is their `usr_…` id. */
async function person(t: TestApp, options: { admin?: boolean } = {}): Promise<Person> {
  const p = await signIn(t, env.issuer, options);
  expect(p.id).toMatch(/^usr_/);
  return p;
}

/** Straight from the database: the wallet balance (null without a wallet) and its number of postings. */
async function ledgerOf(userId: string): Promise<{ balance: number | null; postings: number }> {
  const wallet = await walletRow(env.db.database.db, userId);
  return { balance: wallet?.balance ?? null, postings: wallet?.postings ?? 0 };
}

async function ledgerCounts(): Promise<{ transactions: number; postings: number }> {
  const [row] = await queryRows<{ t: string; p: string }>(
    env.db.database.db,
    sql`select (select count(*)::text from ledger_transactions) as t, (select count(*)::text from ledger_postings) as p`,
  );
  return { transactions: Number(row?.t), postings: Number(row?.p) };
}

describe("wallet overview", () => {
  it("shows a new user 0 coins on the standard tier, with a stable wallet id", async () => {
    // The real tier lookup (subscriptions): a user without a subscription is standard.
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const user = await person(t);
    const first = await overview(t, user);
    expect(first).toEqual({ walletId: expect.stringMatching(/^wal_[0-9a-z]{26}$/), userId: user.id, balance: 0, coins: 0, tier: "standard" });
    const second = await overview(t, user);
    expect(second).toEqual(first);
    expect(await ledgerOf(user.id)).toEqual({ balance: 0, postings: 0 });

    const other = await person(t);
    expect((await overview(t, other)).walletId).not.toBe(first.walletId);
  });

  it("needs authentication", async () => {
    const t = app();
    await expectError(await t.request("/api/v1/wallet/overview"), 401, "unauthorized");
  });
});

describe("coin awards", () => {
  it("credits the user from the mint and answers exactly {success, balance, awardedAmount}", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const user = await person(t);
    const res = await t.request("/api/v1/wallet/coins/award", json({ userId: user.id, amount: 250, reason: "welcome bonus" }, admin.headers));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ success: true, balance: 250, awardedAmount: 250 });
    const again = await t.request("/api/v1/wallet/coins/award", json({ userId: user.id, amount: 50, reason: "streak" }, admin.headers));
    expect(await again.json()).toEqual({ success: true, balance: 300, awardedAmount: 50 });
    expect(await overview(t, user)).toMatchObject({ balance: 300, coins: 300 });
    expect(await ledgerOf(user.id)).toEqual({ balance: 300, postings: 2 });
  });

  it("is for admins only: a user gets 403 and nothing is awarded", async () => {
    const t = app();
    const user = await person(t);
    const before = await ledgerCounts();
    const res = await t.request("/api/v1/wallet/coins/award", json({ userId: user.id, amount: 100, reason: "self-service" }, user.headers));
    await expectError(res, 403, "forbidden");
    expect(await ledgerCounts()).toEqual(before);
    expect((await ledgerOf(user.id)).postings).toBe(0);
  });

  it("answers 404 for an unknown user and 400 for a missing or empty reason", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const user = await person(t);
    const before = await ledgerCounts();
    await expectError(await t.request("/api/v1/wallet/coins/award", json({ userId: "usr_doesnotexist", amount: 10, reason: "x" }, admin.headers)), 404, "not_found");

    for (const body of [
      { userId: user.id, amount: 10 },
      { userId: user.id, amount: 10, reason: "" },
      { userId: user.id, amount: 10, reason: "   " },
    ]) {
      const err = await expectError(await t.request("/api/v1/wallet/coins/award", json(body, admin.headers)), 400, "invalid_input");
      expect(Array.isArray(err.details) && err.details.map((d) => d.path), JSON.stringify(body)).toEqual(["reason"]);
    }
    expect(await ledgerCounts()).toEqual(before);
  });
});

describe("transfers", () => {
  it("moves coins and answers exactly {success, balance, transferredAmount}", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const [alice, bob] = [await person(t), await person(t)];
    await award(t, admin, alice.id, 500);
    const res = await transfer(t, alice, { toUserId: bob.id, amount: 120, note: "dinner" });
    expect(res.status).toBe(200);
    expect(res.headers.get("idempotent-replayed")).toBeNull();
    expect(await res.json()).toEqual({ success: true, balance: 380, transferredAmount: 120 });
    expect(await overview(t, bob)).toMatchObject({ userId: bob.id, balance: 120, coins: 120 });
    expect(await overview(t, alice)).toMatchObject({ balance: 380, coins: 380 });
    expect(await ledgerOf(alice.id)).toEqual({ balance: 380, postings: 2 });
    expect(await ledgerOf(bob.id)).toEqual({ balance: 120, postings: 1 });
  });

  it("refuses a transfer to oneself (400) and to an unknown user (404), changing nothing", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const alice = await person(t);
    await award(t, admin, alice.id, 100);
    const before = await ledgerCounts();
    const self = await expectError(await transfer(t, alice, { toUserId: alice.id, amount: 10 }), 400, "invalid_input");
    expect(self.details).toEqual([{ path: "toUserId", message: expect.any(String) }]);
    await expectError(await transfer(t, alice, { toUserId: "usr_doesnotexist", amount: 10 }), 404, "not_found");
    expect(await ledgerCounts()).toEqual(before);
    expect(await ledgerOf(alice.id)).toEqual({ balance: 100, postings: 1 });
  });

  it("refuses a transfer between two people when either blocked the other, as if the recipient did not exist", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const [victim, harasser, stranger] = [await person(t), await person(t), await person(t)];
    await award(t, admin, victim.id, 100);
    await award(t, admin, harasser.id, 100);
    expect((await t.request("/api/v1/blocks", json({ userId: harasser.id }, victim.headers))).status).toBe(201);
    const before = await ledgerCounts();
    // Both directions, and the note never reaches the other side's history.
    await expectError(await transfer(t, harasser, { toUserId: victim.id, amount: 1, note: "I can still reach you" }), 404, "not_found");
    await expectError(await transfer(t, victim, { toUserId: harasser.id, amount: 1 }), 404, "not_found");
    expect(await ledgerCounts()).toEqual(before);
    // Everyone else is unaffected, and an unblock restores it.
    expect((await transfer(t, harasser, { toUserId: stranger.id, amount: 1 })).status).toBe(200);
    expect((await t.request(`/api/v1/blocks/${harasser.id}`, { method: "DELETE", headers: victim.headers })).status).toBeLessThan(300);
    expect((await transfer(t, harasser, { toUserId: victim.id, amount: 1 })).status).toBe(200);
  });

  it("answers 422 insufficient_funds when the sender lacks coins, and nothing changes", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const [alice, bob] = [await person(t), await person(t)];
    await award(t, admin, alice.id, 100);
    await award(t, admin, bob.id, 7);
    const before = { counts: await ledgerCounts(), alice: await ledgerOf(alice.id), bob: await ledgerOf(bob.id) };

    await expectError(await transfer(t, alice, { toUserId: bob.id, amount: 101 }), 422, "insufficient_funds");
    // A user who never had coins (and so has no wallet yet) is refused the same way.
    const carol = await person(t);
    await expectError(await transfer(t, carol, { toUserId: bob.id, amount: 1 }), 422, "insufficient_funds");

    expect(await ledgerCounts()).toEqual(before.counts);
    expect(await ledgerOf(alice.id)).toEqual(before.alice);
    expect(await ledgerOf(bob.id)).toEqual(before.bob);
    expect((await ledgerOf(carol.id)).postings).toBe(0);
    // The whole balance can still go.
    expect(await (await transfer(t, alice, { toUserId: bob.id, amount: 100 })).json()).toEqual({ success: true, balance: 0, transferredAmount: 100 });
  });

  it.each<[label: string, body: () => BodyInit, contentType: string, detailPath: string]>([
    ["amount 0", () => JSON.stringify({ toUserId: "{bob}", amount: 0 }), "application/json", "amount"],
    ["amount -5", () => JSON.stringify({ toUserId: "{bob}", amount: -5 }), "application/json", "amount"],
    ["amount 1.5", () => JSON.stringify({ toUserId: "{bob}", amount: 1.5 }), "application/json", "amount"],
    ["amount as a string", () => JSON.stringify({ toUserId: "{bob}", amount: "10" }), "application/json", "amount"],
    ["amount 2**53", () => JSON.stringify({ toUserId: "{bob}", amount: 2 ** 53 }), "application/json", "amount"],
    ["amount 1e300", () => JSON.stringify({ toUserId: "{bob}", amount: 1e300 }), "application/json", "amount"],
    ["amount over the configured cap", () => JSON.stringify({ toUserId: "{bob}", amount: 1001 }), "application/json", "amount"],
    ["a note of 281 characters", () => JSON.stringify({ toUserId: "{bob}", amount: 5, note: "n".repeat(281) }), "application/json", "note"],
    ["no toUserId", () => JSON.stringify({ amount: 5 }), "application/json", "toUserId"],
    ["an unknown extra field", () => JSON.stringify({ toUserId: "{bob}", amount: 5, memo: "hi" }), "application/json", "(root)"],
    ["malformed JSON", () => '{"toUserId": "{bob}", "amount": 5', "application/json", "(body)"],
    ["a form content type", () => "toUserId={bob}&amount=5", "application/x-www-form-urlencoded", "(header) content-type"],
    ["a text content type", () => JSON.stringify({ toUserId: "{bob}", amount: 5 }), "text/plain", "(header) content-type"],
  ])("answers %s with 400 invalid_input and details, changing nothing", async (_label, body, contentType, detailPath) => {
    const t = app({ env: { WALLET_MAX_TRANSFER: "1000" } });
    const admin = await person(t, { admin: true });
    const [alice, bob] = [await person(t), await person(t)];
    // 1,000 coins: the over-the-cap amount (1,001) is refused as input, not as insufficient funds.
    await award(t, admin, alice.id, 1000);
    await award(t, admin, bob.id, 3);
    const before = { counts: await ledgerCounts(), alice: await ledgerOf(alice.id), bob: await ledgerOf(bob.id) };

    const res = await t.request("/api/v1/wallet/transfer", {
      method: "POST",
      headers: { ...alice.headers, "content-type": contentType },
      body: String(body()).replaceAll("{bob}", bob.id),
    });
    const err = await expectError(res, 400, "invalid_input");
    expect(Array.isArray(err.details), JSON.stringify(err)).toBe(true);
    expect((err.details as { path: string }[]).map((d) => d.path)).toContain(detailPath);

    expect(await ledgerCounts()).toEqual(before.counts);
    expect(await ledgerOf(alice.id)).toEqual(before.alice);
    expect(await ledgerOf(bob.id)).toEqual(before.bob);
  });

  it("allows exactly the configured cap", async () => {
    const t = app({ env: { WALLET_MAX_TRANSFER: "1000" } });
    const admin = await person(t, { admin: true });
    const [alice, bob] = [await person(t), await person(t)];
    await award(t, admin, alice.id, 1000);
    const err = await expectError(await t.request("/api/v1/wallet/coins/award", json({ userId: alice.id, amount: 1001, reason: "too much" }, admin.headers)), 400, "invalid_input");
    expect(err.details).toEqual([{ path: "amount", message: "at most 1000" }]);
    expect(await (await transfer(t, alice, { toUserId: bob.id, amount: 1000 })).json()).toEqual({ success: true, balance: 0, transferredAmount: 1000 });
  });
});

interface HistoryEntry {
  id: string;
  type: string;
  amount: number;
  direction: "credit" | "debit";
  signedAmount: number;
  counterparty: { kind: string; userId: string | null; displayName: string | null };
  balanceAfter: number;
  note: string | null;
  createdAt: string;
}
interface HistoryPage {
  transactions: HistoryEntry[];
  nextCursor: string | null;
}

async function historyOf(t: TestApp, user: Person, query = ""): Promise<HistoryPage> {
  const res = await t.request(`/api/v1/wallet/transactions${query}`, { headers: user.headers });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as HistoryPage;
}

describe("transaction history", () => {
  it("lists awards, sent and received transfers newest first with every field right", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const [ursula, vera] = [await person(t), await person(t)];
    await env.db.database.db.execute(sql`update users set display_name = 'Vera V.' where id = ${vera.id}`);
    await env.db.database.db.execute(sql`update users set display_name = 'Ursula U.' where id = ${ursula.id}`);
    const started = Date.now();
    await award(t, admin, ursula.id, 1000, "welcome");
    expect((await transfer(t, ursula, { toUserId: vera.id, amount: 300, note: "concert tickets" })).status).toBe(200);
    expect((await transfer(t, vera, { toUserId: ursula.id, amount: 50 })).status).toBe(200);

    const page = await historyOf(t, ursula);
    expect(page.nextCursor).toBeNull();
    expect(page.transactions).toHaveLength(3);
    for (const entry of page.transactions) {
      expect(Object.keys(entry).sort()).toEqual(["amount", "balanceAfter", "counterparty", "createdAt", "direction", "id", "note", "signedAmount", "type"]);
      expect(entry.id).toMatch(/^txn_/);
      expect(new Date(entry.createdAt).toISOString()).toBe(entry.createdAt);
      expect(Date.parse(entry.createdAt)).toBeGreaterThanOrEqual(started - 5_000);
    }
    const [received, sent, awarded] = page.transactions;
    expect(received).toEqual({
      id: expect.any(String),
      type: "transfer",
      amount: 50,
      direction: "credit",
      signedAmount: 50,
      counterparty: { kind: "user", userId: vera.id, displayName: "Vera V." },
      balanceAfter: 750,
      note: null,
      createdAt: expect.any(String),
    });
    expect(sent).toEqual({
      id: expect.any(String),
      type: "transfer",
      amount: 300,
      direction: "debit",
      signedAmount: -300,
      counterparty: { kind: "user", userId: vera.id, displayName: "Vera V." },
      balanceAfter: 700,
      note: "concert tickets",
      createdAt: expect.any(String),
    });
    expect(awarded).toEqual({
      id: expect.any(String),
      type: "award",
      amount: 1000,
      direction: "credit",
      signedAmount: 1000,
      counterparty: { kind: "mint", userId: null, displayName: null },
      balanceAfter: 1000,
      note: "welcome",
      createdAt: expect.any(String),
    });
    expect(new Set(page.transactions.map((e) => e.id)).size).toBe(3);
    expect(Date.parse(received!.createdAt)).toBeGreaterThanOrEqual(Date.parse(sent!.createdAt));
    expect(Date.parse(sent!.createdAt)).toBeGreaterThanOrEqual(Date.parse(awarded!.createdAt));

    // The other side sees the same transactions, mirrored.
    const veras = await historyOf(t, vera);
    expect(veras.transactions.map((e) => [e.id, e.direction, e.signedAmount, e.balanceAfter, e.counterparty])).toEqual([
      [received!.id, "debit", -50, 250, { kind: "user", userId: ursula.id, displayName: "Ursula U." }],
      [sent!.id, "credit", 300, 300, { kind: "user", userId: ursula.id, displayName: "Ursula U." }],
    ]);
  });

  it("walks every entry once with limit=2 cursors, and rejects a malformed cursor", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const [walker, friend] = [await person(t), await person(t)];
    await award(t, admin, walker.id, 100, "one");
    await award(t, admin, walker.id, 200, "two");
    expect((await transfer(t, walker, { toUserId: friend.id, amount: 30 })).status).toBe(200);
    await award(t, admin, friend.id, 5, "friend's");
    expect((await transfer(t, friend, { toUserId: walker.id, amount: 4 })).status).toBe(200);
    await award(t, admin, walker.id, 300, "three");

    const all = await historyOf(t, walker, "?limit=100");
    expect(all.transactions.map((e) => e.signedAmount)).toEqual([300, 4, -30, 200, 100]);

    const seen: string[] = [];
    const pageSizes: number[] = [];
    let cursor: string | null = null;
    for (let guard = 0; guard < 10; guard++) {
      const page: HistoryPage = await historyOf(t, walker, `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      seen.push(...page.transactions.map((e) => e.id));
      pageSizes.push(page.transactions.length);
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    expect(pageSizes).toEqual([2, 2, 1]);
    expect(seen).toEqual(all.transactions.map((e) => e.id));
    expect(new Set(seen).size).toBe(5);

    for (const bad of ["!!!", "cDp4", "bm90LWEtY3Vyc29y", "x".repeat(65), ""]) {
      const res = await t.request(`/api/v1/wallet/transactions?cursor=${encodeURIComponent(bad)}`, { headers: walker.headers });
      await expectError(res, 400, "invalid_input");
    }
    for (const limit of ["0", "101", "abc"]) {
      await expectError(await t.request(`/api/v1/wallet/transactions?limit=${limit}`, { headers: walker.headers }), 400, "invalid_input");
    }
  });

  it("never shows the caller other people's transactions", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const [a, b, outsider] = [await person(t), await person(t), await person(t)];
    await award(t, admin, a.id, 500);
    expect((await transfer(t, a, { toUserId: b.id, amount: 25 })).status).toBe(200);

    expect(await historyOf(t, outsider)).toEqual({ transactions: [], nextCursor: null });
    await award(t, admin, outsider.id, 9, "mine");
    const own = await historyOf(t, outsider);
    expect(own.transactions).toHaveLength(1);
    expect(own.transactions[0]).toMatchObject({ type: "award", amount: 9, note: "mine" });

    // Another person's cursor only pages through the caller's own entries.
    const aPage = await historyOf(t, a, "?limit=1");
    expect(aPage.nextCursor).not.toBeNull();
    const viaForeignCursor = await historyOf(t, outsider, `?cursor=${encodeURIComponent(aPage.nextCursor!)}`);
    const aIds = new Set((await historyOf(t, a)).transactions.map((e) => e.id));
    for (const entry of viaForeignCursor.transactions) expect(aIds.has(entry.id)).toBe(false);
    expect(viaForeignCursor.transactions.every((e) => e.note === "mine")).toBe(true);
  });
});

interface Board {
  entries: { rank: number; userId: string; displayName: string; coins: number }[];
  nextOffset: number | null;
}

describe("leaderboard", () => {
  it("ranks by coins, pages with offsets, and serves a cached page for 30 s", async () => {
    const clock = fixedClock(Date.now());
    // The in-process store: the page cache's 30 s must run on the test's fake clock, as Redis's TTLs cannot.
    const t = app({ clock, kv: createMemoryStore({ clock }) });
    const admin = await person(t, { admin: true });
    // Far above anything else in this file's database, so these three hold the top ranks.
    const [gold, silver, bronze] = [await person(t), await person(t), await person(t)];
    await env.db.database.db.execute(sql`update users set display_name = 'Goldie' where id = ${gold.id}`);
    await award(t, admin, bronze.id, 700_000);
    await award(t, admin, gold.id, 900_000);
    await award(t, admin, silver.id, 800_000);

    const read = async (query: string): Promise<Board> => {
      const res = await t.request(`/api/v1/wallet/leaderboard${query}`, { headers: gold.headers });
      expect(res.status).toBe(200);
      return (await res.json()) as Board;
    };

    const first = await read("?limit=2");
    expect(first).toEqual({
      entries: [
        { rank: 1, userId: gold.id, displayName: "Goldie", coins: 900_000 },
        { rank: 2, userId: silver.id, displayName: `Member ${silver.id.slice(-6)}`, coins: 800_000 },
      ],
      nextOffset: 2,
    });
    const second = await read("?limit=2&offset=2");
    expect(second.entries[0]).toEqual({ rank: 3, userId: bronze.id, displayName: `Member ${bronze.id.slice(-6)}`, coins: 700_000 });
    const coins = second.entries.map((e) => e.coins);
    expect(coins).toEqual([...coins].sort((x, y) => y - x));

    // The whole board, walked page by page, is ordered and holds every wallet with coins once.
    const walked: Board["entries"] = [];
    let offset: number | null = 0;
    while (offset !== null) {
      const page: Board = await read(`?limit=3&offset=${offset}`);
      walked.push(...page.entries);
      offset = page.nextOffset;
    }
    const [{ n: withCoins }] = (await queryRows<{ n: string }>(env.db.database.db, sql`select count(*)::text as n from ledger_accounts a where kind = 'wallet' and balance > 0
              and not exists (select 1 from profiles p where p.user_id = a.user_id and p.visibility = 'hidden')`)) as [{ n: string }];
    expect(walked).toHaveLength(Number(withCoins));
    expect(walked.map((e) => e.rank)).toEqual(walked.map((_, i) => i + 1));
    expect(new Set(walked.map((e) => e.userId)).size).toBe(walked.length);
    for (let i = 1; i < walked.length; i++) expect(walked[i - 1]!.coins).toBeGreaterThanOrEqual(walked[i]!.coins);

    // A new leader does not show until the cached page is 30 s old.
    const newcomer = await person(t);
    await award(t, admin, newcomer.id, 950_000);
    expect(await read("?limit=2")).toEqual(first);
    clock.advance(29_999);
    expect(await read("?limit=2")).toEqual(first);
    clock.advance(1);
    const fresh = await read("?limit=2");
    expect(fresh.entries.map((e) => [e.rank, e.userId, e.coins])).toEqual([
      [1, newcomer.id, 950_000],
      [2, gold.id, 900_000],
    ]);

    for (const query of ["?limit=0", "?limit=101", "?offset=-1", "?offset=10001"]) {
      await expectError(await t.request(`/api/v1/wallet/leaderboard${query}`, { headers: gold.headers }), 400, "invalid_input");
    }
  });
});

describe("leaderboard privacy", () => {
  it("leaves out members who hid their profile, and from a viewer's pages anyone with a block between them", async () => {
    // The app's own key prefix on Redis: pages are computed afresh here, never served from another test's cache.
    const t = app();
    const admin = await person(t, { admin: true });
    const [viewer, hidden, blocked, other] = [await person(t), await person(t), await person(t), await person(t)];
    for (const p of [hidden, blocked, other]) await award(t, admin, p.id, 10);
    await env.db.database.db.execute(
      sql`insert into profiles (user_id, display_name, birth_date, gender, interested_in, visibility, created_at, updated_at, last_active_at)
          values (${hidden.id}, 'Hidden', '1990-01-01', 'man', '{woman}', 'hidden', now(), now(), now())`,
    );
    await env.db.database.db.execute(sql`insert into blocks (blocker_id, blocked_id, created_at) values (${blocked.id}, ${viewer.id}, now())`);
    const walk = async (who: Person) => {
      const ids: string[] = [];
      let offset: number | null = 0;
      while (offset !== null) {
        const page = (await (await t.request(`/api/v1/wallet/leaderboard?limit=100&offset=${offset}`, { headers: who.headers })).json()) as Board;
        ids.push(...page.entries.map((e) => e.userId));
        offset = page.nextOffset;
      }
      return ids;
    };
    const seenByViewer = await walk(viewer);
    const seenByOther = await walk(other);
    expect(seenByViewer).toContain(other.id);
    expect(seenByViewer).not.toContain(hidden.id);
    expect(seenByViewer).not.toContain(blocked.id);
    expect(seenByOther).toContain(blocked.id);
    expect(seenByOther).not.toContain(hidden.id);
  });
});

describe("Idempotency-Key", () => {
  it("replays the first answer for the same key and body, and transfers once", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const [alice, bob] = [await person(t), await person(t)];
    await award(t, admin, alice.id, 100);
    const key = { "idempotency-key": "transfer-2026-07-01-0001" };
    const body = { toUserId: bob.id, amount: 40, note: "rent share" };

    const first = await transfer(t, alice, body, key);
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const firstBody = await first.json();
    expect(firstBody).toEqual({ success: true, balance: 60, transferredAmount: 40 });

    for (let i = 0; i < 2; i++) {
      const again = await transfer(t, alice, body, key);
      expect(again.status).toBe(200);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(await again.json()).toEqual(firstBody);
    }
    expect(await ledgerOf(alice.id)).toEqual({ balance: 60, postings: 2 });
    expect(await ledgerOf(bob.id)).toEqual({ balance: 40, postings: 1 });

    // Without the key, the same body is a new transfer.
    expect(await (await transfer(t, alice, body)).json()).toEqual({ success: true, balance: 20, transferredAmount: 40 });
  });

  it("answers 409 conflict for the same key with another body", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const [alice, bob] = [await person(t), await person(t)];
    await award(t, admin, alice.id, 100);
    const key = { "idempotency-key": "k-conflict" };
    expect((await transfer(t, alice, { toUserId: bob.id, amount: 10 }, key)).status).toBe(200);
    await expectError(await transfer(t, alice, { toUserId: bob.id, amount: 11 }, key), 409, "conflict");
    // A changed note is another body too.
    await expectError(await transfer(t, alice, { toUserId: bob.id, amount: 10, note: "changed" }, key), 409, "conflict");
    expect(await ledgerOf(alice.id)).toEqual({ balance: 90, postings: 2 });
  });

  it("keeps keys per user: another user may use the same key string", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const [alice, bob, carol] = [await person(t), await person(t), await person(t)];
    await award(t, admin, alice.id, 100);
    await award(t, admin, bob.id, 100);
    const key = { "idempotency-key": "shared-key-string" };
    const fromAlice = await transfer(t, alice, { toUserId: carol.id, amount: 10 }, key);
    const fromBob = await transfer(t, bob, { toUserId: carol.id, amount: 10 }, key);
    expect(fromAlice.status).toBe(200);
    expect(fromBob.status).toBe(200);
    expect(fromBob.headers.get("idempotent-replayed")).toBeNull();
    expect(await fromBob.json()).toEqual({ success: true, balance: 90, transferredAmount: 10 });
    expect(await ledgerOf(carol.id)).toEqual({ balance: 20, postings: 2 });
  });

  it("replays a failed 422 transfer, even once the sender could afford it", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const [alice, bob] = [await person(t), await person(t)];
    await award(t, admin, alice.id, 5);
    const key = { "idempotency-key": "too-much" };
    const body = { toUserId: bob.id, amount: 50 };
    const first = await transfer(t, alice, body, key);
    const firstBody = await expectError(first, 422, "insufficient_funds");

    const again = await transfer(t, alice, body, key);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await expectError(again, 422, "insufficient_funds")).toEqual(firstBody);

    await award(t, admin, alice.id, 100);
    const later = await transfer(t, alice, body, key);
    expect(later.headers.get("idempotent-replayed")).toBe("true");
    expect(await expectError(later, 422, "insufficient_funds")).toEqual(firstBody);
    expect(await ledgerOf(alice.id)).toEqual({ balance: 105, postings: 2 });
    expect(await ledgerOf(bob.id)).toMatchObject({ postings: 0 });
  });

  it("works on coin awards too", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const user = await person(t);
    const key = { "idempotency-key": "award:campaign-7:user" };
    const body = { userId: user.id, amount: 75, reason: "campaign 7" };
    const first = await t.request("/api/v1/wallet/coins/award", json(body, { ...admin.headers, ...key }));
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ success: true, balance: 75, awardedAmount: 75 });
    const again = await t.request("/api/v1/wallet/coins/award", json(body, { ...admin.headers, ...key }));
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual({ success: true, balance: 75, awardedAmount: 75 });
    await expectError(await t.request("/api/v1/wallet/coins/award", json({ ...body, amount: 76 }, { ...admin.headers, ...key })), 409, "conflict");
    expect(await ledgerOf(user.id)).toEqual({ balance: 75, postings: 1 });
  });

  it("takes over a key left in flight by a request that died, once it is 5 minutes old, and transfers once", async () => {
    const clock = fixedClock(Date.now());
    const t = app({ clock });
    const admin = await person(t, { admin: true });
    const [alice, bob] = [await person(t), await person(t)];
    await award(t, admin, alice.id, 100);
    const key = "died-before-commit";
    const body = { toUserId: bob.id, amount: 30 };
    // What a process that died between claiming the key and committing the transfer leaves behind.
    await env.db.database.db.insert(idempotencyKeys).values({
      userId: alice.id,
      key,
      fingerprint: await sha256Hex(`POST /api/v1/wallet/transfer\n${canonicalBody(JSON.stringify(body))}`),
      status: "in_flight",
      createdAt: new Date(clock.now()),
    });

    clock.advance(STALE_IN_FLIGHT_MS - 1_000);
    const early = await expectError(await transfer(t, alice, body, { "idempotency-key": key }), 409, "conflict");
    expect(early.message).toMatch(/still in progress/);
    // Another body under the stale key is still another request.
    clock.advance(2_000);
    await expectError(await transfer(t, alice, { ...body, amount: 31 }, { "idempotency-key": key }), 409, "conflict");

    const taken = await transfer(t, alice, body, { "idempotency-key": key });
    expect(taken.status).toBe(200);
    expect(taken.headers.get("idempotent-replayed")).toBeNull();
    expect(await taken.json()).toEqual({ success: true, balance: 70, transferredAmount: 30 });
    const again = await transfer(t, alice, body, { "idempotency-key": key });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual({ success: true, balance: 70, transferredAmount: 30 });
    expect(await ledgerOf(alice.id)).toEqual({ balance: 70, postings: 2 });
    expect(await ledgerOf(bob.id)).toEqual({ balance: 30, postings: 1 });
  });

  it("rolls back a slow request whose key a retry took over: the transfer happens once", async () => {
    const clock = fixedClock(Date.now());
    const t = app({ clock });
    const admin = await person(t, { admin: true });
    const [alice, bob] = [await person(t), await person(t)];
    await award(t, admin, alice.id, 1000);
    await award(t, admin, bob.id, 1); // bob's wallet exists, so it can be held
    const body = { toUserId: bob.id, amount: 100 };
    const headers = { "idempotency-key": "slow-then-retried" };
    await withPgClient(env.db.url, async (locker) => {
      const waiting = async (n: number) =>
        vi.waitFor(
          async () => {
            expect(await lockWaiters(locker)).toBe(n);
          },
          { timeout: 10_000, interval: 20 },
        );
      // Something else holds bob's wallet: the first request waits inside its transaction.
      await locker.query("begin");
      await locker.query("select 1 from ledger_accounts where user_id = $1 for update", [bob.id]);
      const first = transfer(t, alice, body, headers);
      await waiting(1);
      // Six minutes on, the client retries; the key looks abandoned and the retry takes it over.
      clock.advance(STALE_IN_FLIGHT_MS + 60_000);
      const second = transfer(t, alice, body, headers);
      // The retry has taken the key over once the key carries its stamp.
      await vi.waitFor(
        async () => {
          const { rows } = await locker.query<{ at: Date }>("select created_at as at from idempotency_keys where user_id = $1 and key = $2", [alice.id, headers["idempotency-key"]]);
          expect(rows[0]?.at.getTime()).toBe(clock.now());
        },
        { timeout: 10_000, interval: 20 },
      );
      await locker.query("commit");
      const answers = await Promise.all([first, second]);
      const statuses = answers.map((r) => r.status);
      expect(statuses).toEqual([409, 200]);
      expect(((await answers[0]!.json()) as { message: string }).message).toMatch(/took over/);
      expect(await answers[1]!.json()).toEqual({ success: true, balance: 900, transferredAmount: 100 });
    });
    expect(await ledgerOf(alice.id)).toEqual({ balance: 900, postings: 2 });
    expect(await ledgerOf(bob.id)).toEqual({ balance: 101, postings: 2 });
    const replay = await transfer(t, alice, body, headers);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.json()).toEqual({ success: true, balance: 900, transferredAmount: 100 });
  });

  it("treats a key past its 48 h retention as new, before the sweep has removed it", async () => {
    // A random draw that never sweeps: the expired row is still there when the key comes back.
    const t = app({ deps: { random: { bytes: (n) => new Uint8Array(n).fill(255) } } });
    const admin = await person(t, { admin: true });
    const [alice, bob] = [await person(t), await person(t)];
    await award(t, admin, alice.id, 100);
    const headers = { "idempotency-key": "monthly-rent" };
    const age = async () =>
      env.db.database.db.execute(
        sql`update idempotency_keys set created_at = created_at - make_interval(secs => ${(KEY_RETENTION_MS + 60_000) / 1000}) where user_id = ${alice.id}`,
      );
    expect((await transfer(t, alice, { toUserId: bob.id, amount: 10 }, headers)).status).toBe(200);
    await age();
    const sameBody = await transfer(t, alice, { toUserId: bob.id, amount: 10 }, headers);
    expect(sameBody.headers.get("idempotent-replayed")).toBeNull();
    expect(await sameBody.json()).toEqual({ success: true, balance: 80, transferredAmount: 10 });
    await age();
    const otherBody = await transfer(t, alice, { toUserId: bob.id, amount: 15 }, headers);
    expect(await otherBody.json()).toEqual({ success: true, balance: 65, transferredAmount: 15 });
    const replay = await transfer(t, alice, { toUserId: bob.id, amount: 15 }, headers);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await ledgerOf(bob.id)).toEqual({ balance: 35, postings: 3 });
  });

  it("takes the same JSON written another way (key order, white space) as the same request", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const [alice, bob] = [await person(t), await person(t)];
    await award(t, admin, alice.id, 100);
    const headers = { "idempotency-key": "reordered" };
    expect((await transfer(t, alice, { toUserId: bob.id, amount: 10, note: "lunch" }, headers)).status).toBe(200);
    const rewritten = await t.request("/api/v1/wallet/transfer", {
      method: "POST",
      headers: { ...alice.headers, ...headers, "content-type": "application/json" },
      body: `{\n  "note": "lunch",\n  "amount": 10,\n  "toUserId": "${bob.id}"\n}`,
    });
    expect(rewritten.status).toBe(200);
    expect(rewritten.headers.get("idempotent-replayed")).toBe("true");
    // A different value is still a different request.
    await expectError(await transfer(t, alice, { toUserId: bob.id, amount: 10, note: "dinner" }, headers), 409, "conflict");
    expect(await ledgerOf(bob.id)).toEqual({ balance: 10, postings: 1 });
  });

  it("sweeps keys past their 48 h retention on about one claim in a hundred, keeping younger ones", async () => {
    const clock = fixedClock(Date.now());
    const db = env.db.database.db;
    const fixedBytes = (value: number): Random => ({ bytes: (n) => new Uint8Array(n).fill(value) });
    const sweeping = app({ clock, deps: { random: fixedBytes(0) } });
    const notSweeping = app({ clock, deps: { random: fixedBytes(255) } });
    const admin = await person(sweeping, { admin: true });
    const [alice, bob] = [await person(sweeping), await person(sweeping)];
    await award(sweeping, admin, alice.id, 100);
    const stored = { userId: alice.id, fingerprint: "0".repeat(64), status: "done", responseStatus: 200, responseBody: {} };
    await db.insert(idempotencyKeys).values([
      { ...stored, key: "expired", createdAt: new Date(clock.now() - KEY_RETENTION_MS - 1_000) },
      { ...stored, key: "kept", createdAt: new Date(clock.now() - KEY_RETENTION_MS + 60_000) },
    ]);
    const keysOfAlice = async () =>
      (await db.select({ key: idempotencyKeys.key }).from(idempotencyKeys).where(eq(idempotencyKeys.userId, alice.id))).map((r) => r.key).sort();

    // The random draw says no: the claim sweeps nothing.
    expect((await transfer(notSweeping, alice, { toUserId: bob.id, amount: 1 }, { "idempotency-key": "first" })).status).toBe(200);
    expect(await keysOfAlice()).toEqual(["expired", "first", "kept"]);

    // It says yes: the sweep runs after the answer and removes only the expired key.
    expect((await transfer(sweeping, alice, { toUserId: bob.id, amount: 1 }, { "idempotency-key": "second" })).status).toBe(200);
    await vi.waitFor(async () => expect(await keysOfAlice()).toEqual(["first", "kept", "second"]), { timeout: 5_000 });
  });

  it("rejects an invalid key with 400 and does nothing", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const [alice, bob] = [await person(t), await person(t)];
    await award(t, admin, alice.id, 100);
    const before = await ledgerCounts();
    for (const bad of ["k".repeat(300), "has spaces in it", "tab\there", "ünïcode"]) {
      const res = await t.request("/api/v1/wallet/transfer", {
        method: "POST",
        headers: { ...alice.headers, "content-type": "application/json", "idempotency-key": bad },
        body: JSON.stringify({ toUserId: bob.id, amount: 10 }),
      });
      const err = await expectError(res, 400, "invalid_input");
      expect(err.details).toEqual([{ path: "(header) idempotency-key", message: expect.any(String) }]);
    }
    // 255 visible characters is the longest key allowed.
    expect((await transfer(t, alice, { toUserId: bob.id, amount: 1 }, { "idempotency-key": "k".repeat(255) })).status).toBe(200);
    expect(await ledgerCounts()).toEqual({ transactions: before.transactions + 1, postings: before.postings + 2 });
  });
});

describe("the database refuses what code must never do", () => {
  async function fundedWallet(): Promise<{ userId: string; walletId: string }> {
    const t = app();
    const admin = await person(t, { admin: true });
    const user = await person(t);
    await award(t, admin, user.id, 40);
    return { userId: user.id, walletId: (await overview(t, user)).walletId };
  }

  it("refuses to edit or delete postings and transactions", async () => {
    const { walletId } = await fundedWallet();
    const before = await ledgerCounts();
    await withPgClient(env.db.url, async (c) => {
      await expect(c.query("update ledger_postings set amount = 1 where account_id = $1", [walletId])).rejects.toMatchObject({ message: "ledger_postings is append-only" });
      await expect(c.query("update ledger_postings set amount = 1")).rejects.toMatchObject({ code: "42501" });
      await expect(c.query("delete from ledger_postings")).rejects.toMatchObject({ message: "ledger_postings is append-only" });
      await expect(c.query("delete from ledger_transactions")).rejects.toMatchObject({ message: "ledger_transactions is append-only" });
      await expect(c.query("update ledger_transactions set note = 'rewritten'")).rejects.toMatchObject({ message: "ledger_transactions is append-only" });
      const { rows } = await c.query<{ amount: string }>("select amount::text from ledger_postings where account_id = $1", [walletId]);
      expect(rows).toEqual([{ amount: "40" }]);
    });
    expect(await ledgerCounts()).toEqual(before);
  });

  it("refuses postings to an unknown account or transaction, and removing accounts or truncating the ledger", async () => {
    const { walletId } = await fundedWallet();
    const before = await ledgerCounts();
    await withPgClient(env.db.url, async (c) => {
      await c.query("begin");
      await c.query("insert into ledger_transactions (id, type) values ('txn_ghost_account', 'award')");
      await expect(
        c.query("insert into ledger_postings (transaction_id, account_id, amount, balance_after) values ('txn_ghost_account', 'wal_nobody', 5, 0), ('txn_ghost_account', 'sys_mint', -5, 0)"),
      ).rejects.toMatchObject({ code: "23503", message: expect.stringContaining("wal_nobody") });
      await c.query("rollback");
      // Balanced postings under a transaction that was never written.
      await expect(
        c.query("insert into ledger_postings (transaction_id, account_id, amount, balance_after) values ('txn_never_written', $1, 5, 0), ('txn_never_written', 'sys_mint', -5, 0)", [walletId]),
      ).rejects.toMatchObject({ code: "23503", message: "ledger transaction txn_never_written does not exist" });
      await expect(c.query("delete from ledger_accounts where id = $1", [walletId])).rejects.toMatchObject({ code: "42501", message: "rows of ledger_accounts are permanent" });
      for (const table of ["ledger_postings", "ledger_transactions", "ledger_accounts"]) {
        await expect(c.query(`truncate ${table} cascade`)).rejects.toMatchObject({ code: "42501" });
      }
      const { rows } = await c.query<{ balance: string }>("select balance::text from ledger_accounts where id = $1", [walletId]);
      expect(rows).toEqual([{ balance: "40" }]);
    });
    expect(await ledgerCounts()).toEqual(before);
  });

  it("refuses an unbalanced transaction, also when its postings are split over statements", async () => {
    const { walletId } = await fundedWallet();
    const before = await ledgerCounts();
    await withPgClient(env.db.url, async (c) => {
      await c.query("begin");
      await c.query("insert into ledger_transactions (id, type, note) values ('txn_unbalanced_test', 'award', 'free money')");
      await expect(
        c.query("insert into ledger_postings (transaction_id, account_id, amount, balance_after) values ('txn_unbalanced_test', $1, 1000, 0)", [walletId]),
      ).rejects.toMatchObject({ code: "23514", message: expect.stringContaining("unbalanced") });
      await c.query("rollback");

      // Each statement's postings must balance by themselves: a later statement cannot even up.
      await c.query("begin");
      await c.query("insert into ledger_transactions (id, type, note) values ('txn_split_test', 'award', 'split')");
      await expect(
        c.query("insert into ledger_postings (transaction_id, account_id, amount, balance_after) values ('txn_split_test', 'sys_mint', -5, 0)"),
      ).rejects.toMatchObject({ code: "23514" });
      await c.query("rollback");

      const { rows } = await c.query<{ balance: string }>("select balance::text from ledger_accounts where id = $1", [walletId]);
      expect(rows).toEqual([{ balance: "40" }]);
      expect((await c.query("select 1 from ledger_transactions where id in ('txn_unbalanced_test', 'txn_split_test')")).rowCount).toBe(0);
    });
    expect(await ledgerCounts()).toEqual(before);
  });

  it("moves a balance only through postings, and refuses a posting that overdraws a wallet", async () => {
    const { walletId } = await fundedWallet();
    const before = await ledgerCounts();
    const onlyByPosting = { code: "42501", message: "a ledger balance moves only through a posting" };
    await withPgClient(env.db.url, async (c) => {
      await expect(c.query("update ledger_accounts set balance = -1 where id = $1", [walletId])).rejects.toMatchObject(onlyByPosting);
      // Coins out of nothing, even as a positive balance, or a system account set by hand.
      await expect(c.query("update ledger_accounts set balance = balance + 1000 where id = $1", [walletId])).rejects.toMatchObject(onlyByPosting);
      await expect(c.query("update ledger_accounts set balance = 0 where id = 'sys_mint'")).rejects.toMatchObject(onlyByPosting);
      const other = await person(app());
      await expect(c.query("insert into ledger_accounts (id, kind, user_id, balance) values ('wal_rich_test', 'wallet', $1, 500)", [other.id])).rejects.toMatchObject({
        code: "42501",
        message: expect.stringContaining("starts at zero"),
      });
      await c.query("begin");
      await c.query("insert into ledger_transactions (id, type) values ('txn_overdraft_test', 'transfer')");
      await expect(
        c.query("insert into ledger_postings (transaction_id, account_id, amount, balance_after) values ('txn_overdraft_test', $1, -41, 0), ('txn_overdraft_test', 'sys_mint', 41, 0)", [walletId]),
      ).rejects.toMatchObject({ code: "23514", constraint: "ledger_accounts_wallet_nonnegative" });
      await c.query("rollback");
      const { rows } = await c.query<{ balance: string }>("select balance::text from ledger_accounts where id = $1", [walletId]);
      expect(rows).toEqual([{ balance: "40" }]);
    });
    expect(await ledgerCounts()).toEqual(before);
  });

  it("refuses an unknown account kind or transaction type, a wallet without an owner, and a zero posting", async () => {
    const { userId, walletId } = await fundedWallet();
    const before = await ledgerCounts();
    const refused = (constraint: string) => ({ code: "23514", constraint });
    await withPgClient(env.db.url, async (c) => {
      await expect(c.query("insert into ledger_accounts (id, kind) values ('acc_shape_test', 'escrow')")).rejects.toMatchObject(refused("ledger_accounts_kind_check"));
      await expect(c.query("insert into ledger_accounts (id, kind) values ('acc_shape_test', 'wallet')")).rejects.toMatchObject(refused("ledger_accounts_wallet_owner_check"));
      await expect(c.query("insert into ledger_accounts (id, kind, user_id) values ('acc_shape_test', 'mint', $1)", [userId])).rejects.toMatchObject(
        refused("ledger_accounts_wallet_owner_check"),
      );
      // The rules hold for updates of those columns too, not only for new accounts.
      await expect(c.query("update ledger_accounts set kind = 'mint' where id = $1", [walletId])).rejects.toMatchObject(refused("ledger_accounts_wallet_owner_check"));
      await expect(c.query("update ledger_accounts set user_id = null where id = $1", [walletId])).rejects.toMatchObject(refused("ledger_accounts_wallet_owner_check"));
      await expect(c.query("update ledger_accounts set kind = 'escrow' where id = 'sys_mint'")).rejects.toMatchObject(refused("ledger_accounts_kind_check"));
      await expect(c.query("insert into ledger_transactions (id, type) values ('txn_shape_test', 'gift')")).rejects.toMatchObject(refused("ledger_transactions_type_check"));
      await c.query("begin");
      await c.query("insert into ledger_transactions (id, type) values ('txn_zero_test', 'award')");
      await expect(
        c.query("insert into ledger_postings (transaction_id, account_id, amount, balance_after) values ('txn_zero_test', $1, 0, 0), ('txn_zero_test', 'sys_mint', 0, 0)", [walletId]),
      ).rejects.toMatchObject(refused("ledger_postings_nonzero"));
      await c.query("rollback");
      const { rows } = await c.query<{ kind: string; user_id: string | null; balance: string }>("select kind, user_id, balance::text from ledger_accounts where id = $1", [walletId]);
      expect(rows).toEqual([{ kind: "wallet", user_id: userId, balance: "40" }]);
      expect((await c.query("select 1 from ledger_accounts where id = 'acc_shape_test'")).rowCount).toBe(0);
    });
    expect(await ledgerCounts()).toEqual(before);
  });
});
