import { and, inArray, isNotNull, sql } from "drizzle-orm";
import { outboxMessages, partners } from "../../db/tables/partners";
import type { DeliveryRecord } from "../delivery-records/records";
import { DISABLE_AFTER_MS, MAX_ATTEMPTS, nextDelayMs } from "./retry";
import type { Attempt } from "./send";
import type { ClaimedMessage, OutboxWorkerDeps } from "./worker";

/** Where a message stands after its attempt: `nextAttemptAt` is set while it is still pending. */
export interface Outcome {
  id: string;
  status: "pending" | "delivered" | "failed";
  nextAttemptAt: number | null;
}

type MessageUpdate = { id: string; status: Outcome["status"]; attempts: number; at: string | null; delivered_at: string | null; next_at: string | null; error: string | null };

/**
 * Writes the outcomes of a batch of attempts in one transaction of a fixed number of statements,
 * whatever the batch's size: the delivery records in one insert, the messages' new states in one
 * update from a JSON record set, the endpoints' failure bookkeeping in one update each way. A
 * batch's cost to the database is then a handful of round trips instead of several per message.
 */
export async function recordOutcomes(d: OutboxWorkerDeps, sent: readonly { msg: ClaimedMessage; attempt: Attempt }[]): Promise<Outcome[]> {
  const released = sent.filter((s) => s.attempt.kind === "released").map((s) => s.msg.id);
  const outcomes: Outcome[] = [];
  const updates: MessageUpdate[] = [];
  const records: DeliveryRecord[] = [];
  const succeeded = new Set<string>();
  const failed = new Set<string>();
  const gone = new Set<string>();
  for (const { msg, attempt } of sent) {
    if (attempt.kind === "released") continue;
    if (attempt.kind === "skipped") {
      updates.push({ id: msg.id, status: "failed", attempts: msg.attempts, at: null, delivered_at: null, next_at: null, error: attempt.error });
      outcomes.push({ id: msg.id, status: "failed", nextAttemptAt: null });
      continue;
    }
    records.push({
      channel: "webhook",
      route: attempt.route,
      outcome: attempt.ok ? "delivered" : "failed",
      latencyMs: attempt.latencyMs,
      statusCode: attempt.statusCode,
      error: attempt.error,
      messageId: msg.id,
      occurredAt: attempt.at,
    });
    const attempts = msg.attempts + 1;
    const at = new Date(attempt.at).toISOString();
    if (attempt.ok) {
      succeeded.add(msg.target_id);
      updates.push({ id: msg.id, status: "delivered", attempts, at, delivered_at: at, next_at: null, error: null });
      outcomes.push({ id: msg.id, status: "delivered", nextAttemptAt: null });
      continue;
    }
    failed.add(msg.target_id);
    if (attempt.gone) gone.add(msg.target_id);
    const delay = attempt.gone || attempts >= MAX_ATTEMPTS ? null : nextDelayMs(attempts, d.random, attempt.retryAfterMs);
    const next = delay === null ? null : attempt.at + delay;
    updates.push({ id: msg.id, status: next === null ? "failed" : "pending", attempts, at, delivered_at: null, next_at: next === null ? null : new Date(next).toISOString(), error: attempt.error });
    outcomes.push({ id: msg.id, status: next === null ? "failed" : "pending", nextAttemptAt: next });
  }

  const now = d.clock.now();
  if (released.length > 0) {
    // Cut by a shutdown, not by the endpoint: due again at once for the next worker, no attempt spent.
    await d.db.update(outboxMessages).set({ nextAttemptAt: new Date(now) }).where(inArray(outboxMessages.id, released));
  }
  if (updates.length === 0) return outcomes;
  // An endpoint that answered once in the batch is not failing; one that said 410 is gone whatever else it said.
  const stillFailing = [...failed].filter((id) => !succeeded.has(id) || gone.has(id));
  await d.db.transaction(async (tx) => {
    if (records.length > 0) await d.records.recordMany(tx, records);
    await tx.execute(sql`
      update outbox_messages o
         set status = v.status, attempts = v.attempts, next_attempt_at = v.next_at, last_error = v.error,
             last_attempt_at = coalesce(v.at, o.last_attempt_at), delivered_at = coalesce(v.delivered_at, o.delivered_at)
        from jsonb_to_recordset(${JSON.stringify(updates)}::jsonb)
             as v(id text, status text, attempts int, at timestamptz, delivered_at timestamptz, next_at timestamptz, error text)
       where o.id = v.id`);
    const recovered = [...succeeded].filter((id) => !gone.has(id));
    if (recovered.length > 0) {
      await tx.update(partners).set({ webhookFailingSince: null }).where(and(inArray(partners.id, recovered), isNotNull(partners.webhookFailingSince)));
    }
    if (stillFailing.length === 0) return;
    const at = new Date(now);
    const marked = await tx
      .update(partners)
      .set({ webhookFailingSince: sql`coalesce(${partners.webhookFailingSince}, ${at.toISOString()}::timestamptz)` })
      .where(inArray(partners.id, stillFailing))
      .returning({ id: partners.id, failingSince: partners.webhookFailingSince, enabled: partners.webhookEnabled });
    for (const partner of marked) {
      const failingTooLong = partner.failingSince !== null && now - partner.failingSince.getTime() >= DISABLE_AFTER_MS;
      if (!partner.enabled || !(gone.has(partner.id) || failingTooLong)) continue;
      const reason = gone.has(partner.id) ? "the endpoint answered 410 Gone" : "the endpoint failed every delivery for 5 days";
      await tx.update(partners).set({ webhookEnabled: false, webhookDisabledReason: reason, webhookDisabledAt: at }).where(inArray(partners.id, [partner.id]));
      d.logger.warn("partner webhook disabled", { partnerId: partner.id, reason });
    }
  });
  return outcomes;
}
