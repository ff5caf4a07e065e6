import { outboxMessages } from "../../db/tables/partners";
import type { IdGenerator } from "../../platform/ids";
import type { Tx } from "../wallet/ledger";
import { OUTBOX_KINDS, type KindData, type OutboxKind } from "./catalogue";

export interface Enqueue<K extends OutboxKind> {
  kind: K;
  /** Whom it is for, by the kind's channel: a partner id for webhooks, a workflow id for the engine. */
  targetId: string;
  data: KindData<K>;
}

/**
 * Writes a message to the outbox inside the caller's transaction: it is sent if and only if the
 * change that caused it commits. The body is fixed here, so every attempt signs and sends the same
 * bytes under the same id. Returns the message id.
 */
export async function enqueue<K extends OutboxKind>(tx: Tx, ctx: { ids: IdGenerator; now: number }, message: Enqueue<K>): Promise<string> {
  const spec = OUTBOX_KINDS[message.kind];
  const checked = spec.data.safeParse(message.data);
  if (!checked.success) throw new Error(`outbox data of ${message.kind} does not match the catalogue`);
  const id = ctx.ids.next("msg");
  const at = new Date(ctx.now);
  const body = JSON.stringify({ type: message.kind, timestamp: at.toISOString(), data: checked.data });
  await tx.insert(outboxMessages).values({ id, kind: message.kind, channel: spec.channel, targetId: message.targetId, body, status: "pending", nextAttemptAt: at, createdAt: at });
  return id;
}
