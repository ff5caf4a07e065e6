import type { Db } from "../../db/port";
import { pgError } from "../../db/errors";
import { postTransfers, type TransferOutcome, type TransferPosting } from "./ledger";

export interface BatchLimits {
  /** Transfers in one statement: bounds how long a batch holds its wallets' locks and how much a
   *  batch that fails has to redo. */
  maxBatch: number;
  /** Batches in the database at once, each on its own pooled connection. */
  maxInFlight: number;
}

const DEFAULT_BATCH_LIMITS: BatchLimits = { maxBatch: 32, maxInFlight: 1 };

interface Pending {
  item: TransferPosting;
  resolve: (outcome: TransferOutcome) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for transfers: a transfer goes to the database at once while fewer than
 * `maxInFlight` batches are there; otherwise it waits for one to come back and leaves with
 * everything else that arrived meanwhile, as one statement and one commit. There is no timer, so
 * an idle server adds no delay, and under load a batch's size follows the load.
 *
 * When a batch fails as a whole (anything but a per-transfer refusal), each of its transfers is
 * tried again alone, outside the batch's place, so one transfer's failure is not the others'. That retry happens only when
 * the database answered with an error, which means the statement was rolled back; a lost
 * connection leaves the commit unknown, and retrying then could post a transfer twice.
 */
export class TransferBatcher {
  readonly #queue: Pending[] = [];
  #inFlight = 0;

  constructor(
    private readonly post: (items: TransferPosting[]) => Promise<TransferOutcome[]>,
    private readonly limits: BatchLimits = DEFAULT_BATCH_LIMITS,
  ) {}

  submit(item: TransferPosting): Promise<TransferOutcome> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#inFlight < this.limits.maxInFlight && this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.limits.maxBatch);
      this.#inFlight++;
      const done = () => {
        this.#inFlight--;
        this.#pump();
      };
      this.post(batch.map((p) => p.item)).then(
        (outcomes) => {
          done();
          batch.forEach((p, i) => p.resolve(outcomes[i] as TransferOutcome));
        },
        (err: unknown) => {
          // The next batch need not wait for these retries: they cannot deadlock with it.
          done();
          this.#settleAlone(batch, err);
        },
      );
    }
  }

  #settleAlone(batch: Pending[], err: unknown): void {
    if (batch.length === 1 || !rolledBack(err)) {
      for (const p of batch) p.reject(err);
      return;
    }
    for (const p of batch) {
      this.post([p.item]).then(
        ([outcome]) => p.resolve(outcome as TransferOutcome),
        (alone: unknown) => p.reject(alone),
      );
    }
  }
}

/**
 * Whether the database refused the statement, so that nothing of it was committed: an error with a
 * SQLSTATE, except the classes that speak of the connection or the server rather than the data
 * (08 connection, 53 resources, 57 operator intervention such as a terminated backend, 58 system,
 * XX internal), after which a retry is either unsafe or would meet the same fault.
 */
function rolledBack(err: unknown): boolean {
  const code = pgError(err).code;
  return code !== undefined && !["08", "53", "57", "58", "XX"].includes(code.slice(0, 2));
}

const batchers = new WeakMap<Db, TransferBatcher>();

/**
 * The batcher of one database handle. On Node the handle is the process's pool, so concurrent
 * requests share batches; on Workers each request has a handle of its own, so a batch there is
 * one transfer, sent at once.
 */
export function transferBatcher(db: Db): TransferBatcher {
  let batcher = batchers.get(db);
  if (!batcher) {
    batcher = new TransferBatcher((items) => postTransfers(db, items));
    batchers.set(db, batcher);
  }
  return batcher;
}
