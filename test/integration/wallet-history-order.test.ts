import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { queryRows } from "../../src/db/rows";
import { ledgerInvariants } from "../../src/services/wallet/ledger";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, award, overview, signIn, transfer, type Person } from "../support/people";

// History is ordered by each posting's place in its wallet, assigned under the wallet's lock: the
// order the balance moved in, with nothing skipped by a reader paging while money moves.

const env = useTestEnvironment();
afterEach(async () => {
  expect(await ledgerInvariants(env.db.database.db)).toEqual({ totalBalance: 0, mismatchedAccounts: 0 });
});

interface Entry {
  id: string;
  signedAmount: number;
  balanceAfter: number;
}
interface Page {
  transactions: Entry[];
  nextCursor: string | null;
}

async function page(t: TestApp, who: Person, query: string): Promise<Page> {
  const res = await t.request(`/api/v1/wallet/transactions${query}`, { headers: who.headers });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Page;
}

/** One walk from the newest entry to the oldest, `limit` at a time. */
async function walk(t: TestApp, who: Person, limit: number): Promise<Entry[]> {
  const entries: Entry[] = [];
  let cursor: string | null = null;
  for (let guard = 0; guard < 1_000; guard++) {
    const p: Page = await page(t, who, `?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    entries.push(...p.transactions);
    cursor = p.nextCursor;
    if (!cursor) return entries;
  }
  throw new Error("the walk did not end");
}

/**
 * A walk is a whole history: no entry twice, and, oldest to newest, each balanceAfter is the one
 * before plus its amount, starting from an empty wallet. A skipped credit would break the chain.
 */
function expectWholeHistory(entries: Entry[]): void {
  expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
  let balance = 0;
  for (const e of [...entries].reverse()) {
    balance += e.signedAmount;
    expect(e.balanceAfter, JSON.stringify(entries)).toBe(balance);
  }
}

describe("wallet history under concurrent transfers", () => {
  it("pages 32 concurrent transfers into one wallet in the order the balance moved, each seen exactly once", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE });
    const admin = await signIn(t, env.issuer, { admin: true });
    const recipient = await signIn(t, env.issuer);
    const senders = await Promise.all(Array.from({ length: 8 }, () => signIn(t, env.issuer)));
    for (const s of senders) await award(t, admin, s.id, 1_000, "seed");

    // Amounts 1..32, all different, so no skipped entry can hide behind an equal one.
    let moving = true;
    const transfers = Promise.all(
      Array.from({ length: 32 }, (_, i) => {
        const sender = senders[i % senders.length] as Person;
        // Keyed and unkeyed: the two ways a transfer reaches the ledger.
        const key: Record<string, string> = i % 2 === 0 ? { "idempotency-key": `order-${i}` } : {};
        return transfer(t, sender, { toUserId: recipient.id, amount: i + 1 }, key).then((r) => r.status);
      }),
    ).finally(() => (moving = false));

    let passes = 0;
    while (moving || passes === 0) {
      expectWholeHistory(await walk(t, recipient, 3));
      passes++;
    }
    expect(await transfers).toEqual(Array(32).fill(200));

    const final = await walk(t, recipient, 5);
    expectWholeHistory(final);
    expect(final.map((e) => e.signedAmount).sort((a, b) => a - b)).toEqual(Array.from({ length: 32 }, (_, i) => i + 1));
    expect(final[0]?.balanceAfter).toBe((await overview(t, recipient)).balance);
    expect((await overview(t, recipient)).balance).toBe((32 * 33) / 2);

    // The places are 1..32 with no gap, and the wallet's newest place is the last of them.
    const [places] = await queryRows<{ n: string; lo: string; hi: string; last: string }>(
      env.db.database.db,
      sql`select count(*)::text as n, min(p.seq)::text as lo, max(p.seq)::text as hi, max(a.last_seq)::text as last
          from ledger_postings p join ledger_accounts a on a.id = p.account_id where a.user_id = ${recipient.id}`,
    );
    expect(places).toEqual({ n: "32", lo: "1", hi: "32", last: "32" });
  });

  it("keeps the history's newest balanceAfter equal to the balance after every one of many racing transfers", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE });
    const admin = await signIn(t, env.issuer, { admin: true });
    const [a, b] = [await signIn(t, env.issuer), await signIn(t, env.issuer)];
    await award(t, admin, a.id, 500, "seed");
    await award(t, admin, b.id, 500, "seed");
    const moves = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0 ? transfer(t, a, { toUserId: b.id, amount: 1 + (i % 7) }, { "idempotency-key": `race-${i}` }) : transfer(t, b, { toUserId: a.id, amount: 1 + (i % 5) }),
    );
    expect((await Promise.all(moves)).map((r) => r.status)).toEqual(Array(40).fill(200));
    for (const who of [a, b]) {
      const entries = await walk(t, who, 7);
      expectWholeHistory(entries);
      expect(entries).toHaveLength(41);
      expect(entries[0]?.balanceAfter).toBe((await overview(t, who)).balance);
    }
  });
});

describe("history cursors", () => {
  it("still takes a cursor handed out before history had places, and refuses one that names another wallet's posting", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE });
    const admin = await signIn(t, env.issuer, { admin: true });
    const [me, other] = [await signIn(t, env.issuer), await signIn(t, env.issuer)];
    for (const amount of [1, 2, 3, 4]) await award(t, admin, me.id, amount, `award ${amount}`);
    await award(t, admin, other.id, 9, "theirs");
    const postingIds = async (userId: string) =>
      (
        await queryRows<{ id: string }>(
          env.db.database.db,
          sql`select p.id::text as id from ledger_postings p join ledger_accounts a on a.id = p.account_id where a.user_id = ${userId} order by p.seq desc`,
        )
      ).map((r) => r.id);
    const mine = await postingIds(me.id);
    const legacy = (postingId: string) => btoa(`p:${postingId}`).replace(/=+$/, "");

    // The cursor an earlier release gave after the second-newest entry: the page goes on below it.
    const rest = await page(t, me, `?limit=10&cursor=${encodeURIComponent(legacy(mine[1] as string))}`);
    expect(rest.transactions.map((e) => e.signedAmount)).toEqual([2, 1]);
    expect(rest.nextCursor).toBeNull();

    const [theirs] = await postingIds(other.id);
    for (const cursor of [legacy(theirs as string), legacy("999999999")]) {
      const res = await t.request(`/api/v1/wallet/transactions?cursor=${encodeURIComponent(cursor)}`, { headers: me.headers });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: "invalid_input", message: expect.stringContaining("start again without a cursor"), details: [{ path: "cursor" }] });
    }
  });
});
