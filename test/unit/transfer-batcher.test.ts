import { describe, expect, it } from "vitest";
import type { TransferOutcome, TransferPosting } from "../../src/services/wallet/ledger";
import { TransferBatcher } from "../../src/services/wallet/transfer-batcher";

const item = (n: number): TransferPosting => ({ id: `txn_${n}`, fromUserId: `usr_a${n}`, toUserId: `usr_b${n}`, amount: n, note: null, at: new Date(0), newWalletId: `wal_${n}` });

/** A database stand-in that answers each batch when the test says so, and records what it was sent. */
function controlledPost(answer: (items: TransferPosting[]) => TransferOutcome[] | Error = (items) => items.map((i) => ({ balance: 1000 - i.amount }))) {
  const sent: TransferPosting[][] = [];
  const waiting: (() => void)[] = [];
  const post = (items: TransferPosting[]) => {
    sent.push(items);
    return new Promise<TransferOutcome[]>((resolve, reject) => {
      waiting.push(() => {
        const result = answer(items);
        if (result instanceof Error) reject(result);
        else resolve(result);
      });
    });
  };
  /** Answers every batch sent so far, and lets the batcher send the next. */
  const release = async () => {
    for (const go of waiting.splice(0)) go();
    await new Promise((r) => setTimeout(r, 0));
  };
  return { post, sent, release };
}

const pgFailure = (code: string) => Object.assign(new Error(`database said ${code}`), { code });

describe("transfer batcher", () => {
  it("sends a lone transfer at once, without waiting for company", async () => {
    const db = controlledPost();
    const batcher = new TransferBatcher(db.post);
    const answer = batcher.submit(item(1));
    expect(db.sent).toEqual([[item(1)]]);
    await db.release();
    await expect(answer).resolves.toEqual({ balance: 999 });
  });

  it("sends what arrives while a batch is in the database as the next batch, in arrival order, up to the batch size", async () => {
    const db = controlledPost();
    const batcher = new TransferBatcher(db.post, { maxBatch: 4, maxInFlight: 1 });
    const answers = Array.from({ length: 7 }, (_, i) => batcher.submit(item(i + 1)));
    expect(db.sent.map((b) => b.map((i) => i.amount))).toEqual([[1]]);
    await db.release();
    expect(db.sent.map((b) => b.map((i) => i.amount))).toEqual([[1], [2, 3, 4, 5]]);
    await db.release();
    expect(db.sent.map((b) => b.map((i) => i.amount))).toEqual([[1], [2, 3, 4, 5], [6, 7]]);
    await db.release();
    // Each caller gets the answer for its own transfer.
    expect(await Promise.all(answers)).toEqual([1, 2, 3, 4, 5, 6, 7].map((n) => ({ balance: 1000 - n })));
  });

  it("keeps up to maxInFlight batches in the database at once", async () => {
    const db = controlledPost();
    const batcher = new TransferBatcher(db.post, { maxBatch: 10, maxInFlight: 2 });
    const answers = [1, 2, 3, 4].map((n) => batcher.submit(item(n)));
    expect(db.sent.map((b) => b.map((i) => i.amount))).toEqual([[1], [2]]);
    await db.release();
    expect(db.sent.map((b) => b.map((i) => i.amount))).toEqual([[1], [2], [3, 4]]);
    await db.release();
    expect(await Promise.all(answers)).toHaveLength(4);
  });

  it("passes refusals through to their own caller only", async () => {
    const db = controlledPost((items) => items.map((i) => (i.amount === 2 ? { refusal: "insufficient_funds" } : { balance: 0 })));
    const batcher = new TransferBatcher(db.post);
    const answers = [1, 2, 3].map((n) => batcher.submit(item(n)));
    await db.release();
    await db.release();
    expect(await Promise.all(answers)).toEqual([{ balance: 0 }, { refusal: "insufficient_funds" }, { balance: 0 }]);
  });

  it("tries each transfer alone when the database refused the whole batch, so one transfer's fault stays its own", async () => {
    const poisoned = pgFailure("22023");
    const db = controlledPost((items) => (items.some((i) => i.amount === 3) ? poisoned : items.map(() => ({ balance: 7 }))));
    const batcher = new TransferBatcher(db.post);
    const first = batcher.submit(item(1));
    const rest = [2, 3, 4].map((n) => batcher.submit(item(n)).then((a) => a, (e: unknown) => e));
    await db.release();
    await db.release();
    await db.release();
    await first;
    expect(await Promise.all(rest)).toEqual([{ balance: 7 }, poisoned, { balance: 7 }]);
    expect(db.sent.map((b) => b.map((i) => i.amount))).toEqual([[1], [2, 3, 4], [2], [3], [4]]);
  });

  it("frees its place for the next batch while a failed batch's transfers are tried alone", async () => {
    const db = controlledPost((items) => (items.length > 1 ? pgFailure("55P03") : items.map(() => ({ balance: 3 }))));
    const batcher = new TransferBatcher(db.post);
    const answers = [1, 2, 3].map((n) => batcher.submit(item(n)));
    await db.release();
    await db.release();
    expect(db.sent.map((b) => b.map((i) => i.amount))).toEqual([[1], [2, 3], [2], [3]]);
    // The retries are still in the database; a new transfer goes at once all the same.
    const later = batcher.submit(item(4));
    expect(db.sent.map((b) => b.map((i) => i.amount))).toEqual([[1], [2, 3], [2], [3], [4]]);
    await db.release();
    expect(await Promise.all([...answers, later])).toEqual([1, 2, 3, 4].map(() => ({ balance: 3 })));
  });

  for (const [what, failure] of [
    ["the connection was lost (no SQLSTATE)", new Error("Connection terminated unexpectedly")],
    ["the backend was terminated (57P01)", pgFailure("57P01")],
    ["a connection exception (08006)", pgFailure("08006")],
  ] as const) {
    it(`does not send a batch again when ${what}: the commit is unknown, and a retry could post twice`, async () => {
      const db = controlledPost((items) => (items.length > 1 ? failure : items.map(() => ({ balance: 1 }))));
      const batcher = new TransferBatcher(db.post);
      const first = batcher.submit(item(1));
      const rest = [2, 3].map((n) => batcher.submit(item(n)).then((a) => a, (e: unknown) => e));
      await db.release();
      await db.release();
      await db.release(); // would answer any retry
      await first;
      expect(await Promise.all(rest)).toEqual([failure, failure]);
      expect(db.sent.map((b) => b.length)).toEqual([1, 2]);
    });
  }

  it("keeps serving after a failed batch", async () => {
    let fail = true;
    const db = controlledPost((items) => (fail ? pgFailure("08006") : items.map(() => ({ balance: 5 }))));
    const batcher = new TransferBatcher(db.post);
    const lost = batcher.submit(item(1)).then((a) => a, (e: unknown) => e);
    await db.release();
    expect(await lost).toMatchObject({ code: "08006" });
    fail = false;
    const next = batcher.submit(item(2));
    await db.release();
    await expect(next).resolves.toEqual({ balance: 5 });
  });
});
