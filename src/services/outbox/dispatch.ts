import type { Db } from "../../db/port";
import type { Logger } from "../../platform/logger";
import type { Tx } from "../wallet/ledger";

/**
 * Told the ids of outbox messages that are due now, once the transaction that wrote them has
 * committed, so that a runtime without a polling loop (Workers: a Queue) sends them at once.
 * Never throws: a message it failed to pass on is still in the table, and the safety net (the
 * cron on Workers) sends it.
 */
export type OutboxDispatch = (ids: readonly string[]) => Promise<void>;

/**
 * Runs `work` in a transaction; the ids it pushes onto `queued` (messages it enqueued) go to the
 * dispatch after the commit, and only then: a rolled-back change has nothing to send.
 */
export async function withOutbox<T>(ctx: { db: Db; dispatch?: OutboxDispatch }, work: (tx: Tx, queued: string[]) => Promise<T>): Promise<T> {
  const queued: string[] = [];
  const result = await ctx.db.transaction((tx) => {
    queued.length = 0;
    return work(tx, queued);
  });
  if (queued.length > 0 && ctx.dispatch) await ctx.dispatch(queued);
  return result;
}

/** The body of an outbox queue message: the id of the outbox row to claim. */
export interface OutboxQueueBody {
  id: string;
}

/** What the dispatch needs of a Cloudflare Queue producer binding. */
export interface OutboxQueue {
  sendBatch(messages: Iterable<{ body: OutboxQueueBody; delaySeconds?: number }>): Promise<unknown>;
}

/** Cloudflare Queues take at most 100 messages per sendBatch call. */
const SEND_BATCH = 100;

/** Sends ids to a queue, each with its delay; a failed send is logged, the cron picks those rows up. */
export async function sendToQueue(queue: OutboxQueue, logger: Logger, messages: readonly { id: string; delaySeconds?: number }[]): Promise<void> {
  for (let i = 0; i < messages.length; i += SEND_BATCH) {
    const chunk = messages.slice(i, i + SEND_BATCH);
    try {
      await queue.sendBatch(chunk.map((m) => ({ body: { id: m.id }, ...(m.delaySeconds ? { delaySeconds: m.delaySeconds } : {}) })));
    } catch (err) {
      logger.warn("outbox ids not queued; the cron sends them", { count: chunk.length, error: err instanceof Error ? err.message : String(err) });
    }
  }
}

/** The dispatch of a runtime with an outbox queue: new messages go to it at once, with no delay. */
export function queueDispatch(queue: OutboxQueue, logger: Logger): OutboxDispatch {
  return (ids) => sendToQueue(queue, logger, ids.map((id) => ({ id })));
}
