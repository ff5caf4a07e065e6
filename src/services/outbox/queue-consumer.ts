import { sendToQueue, type OutboxQueue } from "./dispatch";
import { claimDue, deliverClaimed, deliverDue, DEFAULT_LEASE_MS, type OutboxWorkerDeps } from "./worker";

/** What the consumer needs of a Cloudflare Queue `MessageBatch`. */
export interface OutboxQueueBatch {
  readonly messages: readonly { readonly body: unknown }[];
  ackAll(): void;
  retryAll(options?: { delaySeconds?: number }): void;
}

/** The longest delay Cloudflare Queues accept on a message (12 hours); later retries are the cron's. */
export const MAX_QUEUE_DELAY_SECONDS = 43_200;

function idOf(body: unknown): string | undefined {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === "string" && /^[A-Za-z0-9_]{1,64}$/.test(id) ? id : undefined;
}

/**
 * A Queue consumer's batch: claims exactly the rows named (if they are still pending and due, so
 * a duplicate message or one the cron got to first does nothing), sends them, records the
 * outcomes, and hands each message that failed back to the queue delayed to its next attempt on
 * the outbox's own schedule. The queue only carries ids; the table stays the truth. A batch that
 * fails before its outcomes are written is retried by the queue once the lease of the rows it
 * claimed has run out.
 */
export async function consumeOutboxBatch(d: OutboxWorkerDeps, batch: OutboxQueueBatch, queue: OutboxQueue | undefined): Promise<void> {
  const ids = [...new Set(batch.messages.map((m) => idOf(m.body)).filter((id): id is string => id !== undefined))];
  try {
    const outcomes = await deliverClaimed(d, await claimDue(d, ids.length, ids));
    const now = d.clock.now();
    const retries = outcomes
      .filter((o) => o.status === "pending" && o.nextAttemptAt !== null)
      .map((o) => ({ id: o.id, delaySeconds: Math.max(0, Math.ceil(((o.nextAttemptAt as number) - now) / 1000)) }))
      .filter((r) => r.delaySeconds <= MAX_QUEUE_DELAY_SECONDS);
    if (queue && retries.length > 0) await sendToQueue(queue, d.logger, retries);
    batch.ackAll();
  } catch (err) {
    d.logger.error("outbox queue batch failed", { count: ids.length, error: err instanceof Error ? err.message : String(err) });
    batch.retryAll({ delaySeconds: Math.ceil((d.leaseMs ?? DEFAULT_LEASE_MS) / 1000) + 5 });
  }
}

/**
 * The cron's safety net: delivers whatever is due and nobody sent — rows whose queue message was
 * lost, whose lease ran out under a consumer that died, whose next attempt lies beyond the
 * queue's longest delay — pass after pass until none is left or the budget is spent.
 */
export async function deliverDueWithin(d: OutboxWorkerDeps, budgetMs: number, batch = 100): Promise<number> {
  const deadline = d.clock.now() + budgetMs;
  let total = 0;
  for (;;) {
    const count = await deliverDue(d, batch);
    total += count;
    if (count < batch || d.clock.now() >= deadline) return total;
  }
}
