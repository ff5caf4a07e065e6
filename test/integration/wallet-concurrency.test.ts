import { sql } from "drizzle-orm";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { queryRows } from "../../src/db/rows";
import { ledgerInvariants } from "../../src/services/wallet/ledger";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, award, signIn, transfer, walletRow, type Person } from "../support/people";
import { json } from "../support/users";
import { waitFor } from "../support/wait";

// Real Postgres, real row locks: many requests of one app race on the same wallets.

const env = useTestEnvironment();
afterEach(async () => {
  expect(await ledgerInvariants(env.db.database.db)).toEqual({ totalBalance: 0, mismatchedAccounts: 0 });
});

/** One app per test; enterprise callers (2,000 requests a minute) so the races are not rate limited. */
function app(): TestApp {
  return buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE });
}

const person = (t: TestApp, options: { admin?: boolean } = {}): Promise<Person> => signIn(t, env.issuer, options);

async function walletOf(userId: string): Promise<{ id: string; balance: number; postings: number }> {
  const wallet = await walletRow(env.db.database.db, userId);
  if (!wallet) throw new Error(`no wallet for ${userId}`);
  return wallet;
}

async function transfersBy(userId: string): Promise<number> {
  const [row] = await queryRows<{ n: string }>(env.db.database.db, sql`select count(*)::text as n from ledger_transactions where type = 'transfer' and actor_user_id = ${userId}`);
  return Number(row?.n);
}

function countBy<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[key(item)] = (out[key(item)] ?? 0) + 1;
  return out;
}

interface Outcome {
  status: number;
  replayed: boolean;
  body: Record<string, unknown>;
}

async function outcome(res: Promise<Response>): Promise<Outcome> {
  const r = await res;
  return { status: r.status, replayed: r.headers.get("idempotent-replayed") === "true", body: (await r.json()) as Record<string, unknown> };
}

describe("wallet under concurrency", () => {
  it("lets exactly 20 of 40 parallel 10-coin transfers out of 200 coins through", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const sender = await person(t);
    const recipients = [await person(t), await person(t), await person(t), await person(t)];
    await award(t, admin, sender.id, 200, "seed");

    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => {
        const to = recipients[i % recipients.length]!;
        return outcome(transfer(t, sender, { toUserId: to.id, amount: 10 })).then((o) => ({ ...o, to: to.id }));
      }),
    );
    expect(countBy(results, (r) => String(r.status))).toEqual({ "200": 20, "422": 20 });
    for (const r of results.filter((r) => r.status === 422)) expect(r.body).toMatchObject({ error: "insufficient_funds", code: 422 });
    // Every success reports a distinct balance after it: 190, 180, …, 0.
    const balances = results.filter((r) => r.status === 200).map((r) => r.body.balance as number);
    expect(balances.sort((a, b) => b - a)).toEqual(Array.from({ length: 20 }, (_, i) => 190 - i * 10));

    expect(await walletOf(sender.id)).toMatchObject({ balance: 0, postings: 21 });
    expect(await transfersBy(sender.id)).toBe(20);
    let received = 0;
    for (const r of recipients) {
      const wallet = await walletOf(r.id);
      const succeeded = results.filter((x) => x.status === 200 && x.to === r.id).length;
      expect(wallet).toMatchObject({ balance: 10 * succeeded, postings: succeeded });
      received += wallet.balance;
    }
    expect(received).toBe(200);
  });

  it("runs 50 transfers each way between two people at once without deadlock", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const [a, b] = [await person(t), await person(t)];
    await award(t, admin, a.id, 2000, "seed");
    await award(t, admin, b.id, 3000, "seed");
    // A sends 1..50 (1,275 in all), B sends 2, 4, …, 100 (2,550): enough either way in any order.
    const requests: Promise<Outcome>[] = [];
    for (let i = 1; i <= 50; i++) {
      requests.push(outcome(transfer(t, a, { toUserId: b.id, amount: i })));
      requests.push(outcome(transfer(t, b, { toUserId: a.id, amount: 2 * i })));
    }
    const results = await Promise.all(requests);
    expect(countBy(results, (r) => String(r.status)), JSON.stringify(results.find((r) => r.status !== 200))).toEqual({ "200": 100 });
    expect(await walletOf(a.id)).toMatchObject({ balance: 2000 - 1275 + 2550, postings: 101 });
    expect(await walletOf(b.id)).toMatchObject({ balance: 3000 - 2550 + 1275, postings: 101 });
    expect(t.logs.filter((l) => l.msg === "request failed")).toEqual([]);
  });

  it("performs a transfer once when the same Idempotency-Key is fired 10 times at once", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const [sender, recipient] = [await person(t), await person(t)];
    await award(t, admin, sender.id, 100, "seed");
    const key = { "idempotency-key": "burst-retry-0001" };
    const body = { toUserId: recipient.id, amount: 30 };

    const results = await Promise.all(Array.from({ length: 10 }, () => outcome(transfer(t, sender, body, key))));
    const original = results.filter((r) => r.status === 200 && !r.replayed);
    expect(original).toHaveLength(1);
    expect(original[0]!.body).toEqual({ success: true, balance: 70, transferredAmount: 30 });
    for (const r of results) {
      if (r === original[0]) continue;
      if (r.status === 200) {
        expect(r.replayed).toBe(true);
        expect(r.body).toEqual(original[0]!.body);
      } else {
        expect(r.status).toBe(409);
        expect(r.body).toMatchObject({ error: "conflict", message: expect.stringContaining("still in progress") });
      }
    }

    expect(await transfersBy(sender.id)).toBe(1);
    expect(await walletOf(sender.id)).toMatchObject({ balance: 70, postings: 2 });
    expect(await walletOf(recipient.id)).toMatchObject({ balance: 30, postings: 1 });

    const retry = await outcome(transfer(t, sender, body, key));
    expect(retry).toEqual({ status: 200, replayed: true, body: original[0]!.body });
    expect(await transfersBy(sender.id)).toBe(1);
  });

  it("leaves nothing behind when a transfer's connection is killed mid-transaction, and the pool recovers", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const [p1, p2] = [await person(t), await person(t)];
    await award(t, admin, p1.id, 500, "seed");
    await award(t, admin, p2.id, 500, "seed");
    // Postings go in account-id order: make the sender the one whose wallet sorts first, so the
    // transfer debits the sender and then waits for the recipient's row.
    const [w1, w2] = [await walletOf(p1.id), await walletOf(p2.id)];
    const [sender, recipient] = w1.id < w2.id ? [p1, p2] : [p2, p1];
    const senderWallet = w1.id < w2.id ? w1 : w2;
    const recipientWallet = w1.id < w2.id ? w2 : w1;
    const transfersBefore = await transfersBy(sender.id);

    const locker = new pg.Client({ connectionString: env.db.url });
    const observer = new pg.Client({ connectionString: env.db.url });
    await Promise.all([locker.connect(), observer.connect()]);
    try {
      await locker.query("begin");
      await locker.query("select id from ledger_accounts where id = $1 for update", [recipientWallet.id]);

      const pending = transfer(t, sender, { toUserId: recipient.id, amount: 77, note: "doomed" }, { "idempotency-key": "doomed-transfer" });

      const blockedRow = await waitFor("the transfer to block on the recipient's row", async () => {
        const { rows } = await observer.query<{ pid: number; query: string }>(
          "select pid, query from pg_stat_activity where datname = $1 and wait_event_type = 'Lock' and pid <> pg_backend_pid()",
          [env.db.name],
        );
        expect(rows.length, `more than one blocked backend: ${JSON.stringify(rows)}`).toBeLessThanOrEqual(1);
        return rows[0];
      });
      expect(blockedRow.query).toMatch(/ledger_transfer/);
      const blocked = blockedRow.pid;

      // Inside the doomed transaction the sender has been debited already: its row is locked by
      // that transaction (the locker holds only the recipient's), and the debit is not visible.
      await expect(observer.query("select id from ledger_accounts where id = $1 for update nowait", [senderWallet.id])).rejects.toMatchObject({ code: "55P03" });
      const { rows: seen } = await observer.query<{ balance: string }>("select balance::text from ledger_accounts where id = $1", [senderWallet.id]);
      expect(seen).toEqual([{ balance: String(senderWallet.balance) }]);

      const { rows: terminated } = await observer.query<{ ok: boolean }>("select pg_terminate_backend($1) as ok", [blocked]);
      expect(terminated).toEqual([{ ok: true }]);

      const res = await pending;
      expect(res.status).toBeGreaterThanOrEqual(500);
      const text = await res.text();
      const body = JSON.parse(text) as Record<string, unknown>;
      expect(body).toMatchObject({ error: "internal_error", message: "internal error", code: 500 });
      expect(Object.keys(body).sort()).toEqual(["code", "error", "message", "requestId"]);
      expect(text).not.toMatch(/stack|terminat|ledger_|at \//);
    } finally {
      await locker.query("rollback").catch(() => undefined);
      await Promise.all([locker.end(), observer.end()]);
    }

    expect(await walletOf(sender.id)).toEqual(senderWallet);
    expect(await walletOf(recipient.id)).toEqual(recipientWallet);
    expect(await transfersBy(sender.id)).toBe(transfersBefore);
    const [orphans] = await queryRows<{ n: string }>(env.db.database.db, sql`select count(*)::text as n from ledger_transactions where note = 'doomed'`);
    expect(orphans?.n).toBe("0");
    expect(await ledgerInvariants(env.db.database.db)).toEqual({ totalBalance: 0, mismatchedAccounts: 0 });

    // The API still works: the pool replaced the dead connection, and the key was freed for a retry.
    const retried = await outcome(transfer(t, sender, { toUserId: recipient.id, amount: 77, note: "doomed" }, { "idempotency-key": "doomed-transfer" }));
    expect(retried).toEqual({ status: 200, replayed: false, body: { success: true, balance: senderWallet.balance - 77, transferredAmount: 77 } });
    const later = await Promise.all(Array.from({ length: 12 }, () => outcome(transfer(t, recipient, { toUserId: sender.id, amount: 1 }))));
    expect(later.map((r) => r.status)).toEqual(Array(12).fill(200));
    expect(await walletOf(sender.id)).toMatchObject({ balance: senderWallet.balance - 77 + 12 });
  });

  it("performs 11 parallel awards with 11 keys 11 times, and with one key once", async () => {
    const t = app();
    const admin = await person(t, { admin: true });
    const [many, once] = [await person(t), await person(t)];
    const awardWith = (userId: string, key: string) =>
      outcome(t.request("/api/v1/wallet/coins/award", json({ userId, amount: 13, reason: "parallel" }, { ...admin.headers, "idempotency-key": key })));

    const distinct = await Promise.all(Array.from({ length: 11 }, (_, i) => awardWith(many.id, `award-key-${i}`)));
    expect(distinct.map((r) => [r.status, r.replayed])).toEqual(Array(11).fill([200, false]));
    expect(distinct.map((r) => r.body.balance as number).sort((a, b) => a - b)).toEqual(Array.from({ length: 11 }, (_, i) => 13 * (i + 1)));
    expect(await walletOf(many.id)).toMatchObject({ balance: 143, postings: 11 });

    const same = await Promise.all(Array.from({ length: 11 }, () => awardWith(once.id, "award-key-shared")));
    const original = same.filter((r) => r.status === 200 && !r.replayed);
    expect(original).toHaveLength(1);
    expect(original[0]!.body).toEqual({ success: true, balance: 13, awardedAmount: 13 });
    for (const r of same) {
      if (r === original[0]) continue;
      if (r.status === 200) expect(r).toMatchObject({ replayed: true, body: original[0]!.body });
      else expect(r).toMatchObject({ status: 409, body: { error: "conflict" } });
    }
    expect(await walletOf(once.id)).toMatchObject({ balance: 13, postings: 1 });
  });
});
