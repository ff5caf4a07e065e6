import { eq, sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import { outboxMessages, partners } from "../../db/tables/partners";
import type { Clock } from "../../platform/clock";
import type { IdGenerator, Random } from "../../platform/ids";
import type { Logger } from "../../platform/logger";
import { ApiError } from "../../errors";
import type { HostResolver } from "../kb/url-fetch";
import type { DeliveryRecordWriter } from "../delivery-records/records";
import { assertWebhookUrl, type PartnerRow } from "../partners/profile";
import { DISABLE_AFTER_MS, MAX_ATTEMPTS, nextDelayMs, parseRetryAfter } from "./retry";
import { signatureHeader } from "./signing";
import { deliverRun } from "../workflows/handoff";

export interface OutboxWorkerDeps {
  db: Db;
  clock: Clock;
  random: Random;
  ids: IdGenerator;
  logger: Logger;
  /** Outbound HTTP for deliveries (on Node, one that re-checks each connection's address). */
  fetch: typeof fetch;
  resolver: HostResolver;
  allowedHosts?: readonly string[];
  production: boolean;
  records: DeliveryRecordWriter;
  /** Standard Webhooks asks for 15–30 s; 15 s here. */
  timeoutMs?: number;
  /** How long a claimed message stays invisible to other workers; past it, it is due again. */
  leaseMs?: number;
  /** Aborted on shutdown: attempts in flight are cut and their messages released, not counted. */
  cancel?: AbortSignal;
  /**
   * The automation engine (`engine` channel): the base of its production webhooks, and a fetch
   * without the public-only guard, as the engine is the operator's own and often on a private network.
   */
  engine?: { webhookUrl?: string; fetch: typeof fetch };
}

export type ClaimedMessage = {
  id: string;
  kind: string;
  channel: string;
  target_id: string;
  body: string;
  attempts: number;
};

const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_LEASE_MS = 60_000;
const USER_AGENT = "DatingPlatform-Webhooks/1";

/**
 * Claims due messages: locks them with SKIP LOCKED (so concurrent workers take different rows)
 * and pushes their next attempt a lease ahead, in one statement. Nothing is held open while
 * sending; a worker that dies leaves its rows to come due again when the lease ends.
 */
export async function claimDue(d: OutboxWorkerDeps, limit: number, only?: readonly string[]): Promise<ClaimedMessage[]> {
  const now = d.clock.now();
  const leaseUntil = new Date(now + (d.leaseMs ?? DEFAULT_LEASE_MS)).toISOString();
  const filter = only ? sql`and id = any(${`{${only.join(",")}}`}::text[])` : sql``;
  return queryRows<ClaimedMessage>(
    d.db,
    sql`update outbox_messages o set next_attempt_at = ${leaseUntil}::timestamptz
        from (select id from outbox_messages
              where status = 'pending' and next_attempt_at <= ${new Date(now).toISOString()}::timestamptz ${filter}
              order by next_attempt_at limit ${limit} for update skip locked) due
        where o.id = due.id
        returning o.id, o.kind, o.channel, o.target_id, o.body, o.attempts`,
  );
}

type Attempt =
  | { kind: "skipped"; error: string }
  | { kind: "released" }
  | { kind: "attempted"; ok: boolean; route: string; statusCode: number | null; latencyMs: number | null; error: string | null; retryAfterMs?: number; gone?: boolean };

function liveSecrets(row: PartnerRow, now: number): string[] {
  const secrets = row.webhookSecret ? [row.webhookSecret] : [];
  if (row.webhookPreviousSecret && row.webhookPreviousSecretUntil && row.webhookPreviousSecretUntil.getTime() > now) secrets.push(row.webhookPreviousSecret);
  return secrets;
}

async function sendWebhook(d: OutboxWorkerDeps, msg: ClaimedMessage, row: PartnerRow | undefined): Promise<Attempt> {
  if (!row?.webhookUrl || !row.webhookEnabled || !row.webhookSecret) return { kind: "skipped", error: "the webhook is disabled or not set" };
  const url = row.webhookUrl;
  let route = "invalid";
  try {
    route = new URL(url).host;
    // Names can change their answer after the profile was saved: checked again at every delivery.
    await assertWebhookUrl(d, url);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { kind: "attempted", ok: false, route, statusCode: null, latencyMs: null, error: `refused: ${err.message}` };
  }
  const now = d.clock.now();
  const timestamp = Math.floor(now / 1000);
  const headers = {
    "content-type": "application/json",
    "user-agent": USER_AGENT,
    "webhook-id": msg.id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": await signatureHeader(liveSecrets(row, now), msg.id, timestamp, msg.body),
  };
  const started = performance.now();
  const timeout = AbortSignal.timeout(d.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const signal = d.cancel ? AbortSignal.any([timeout, d.cancel]) : timeout;
  let res: Response;
  try {
    res = await d.fetch(url, { method: "POST", headers, body: msg.body, redirect: "manual", signal });
    // The answer's body is not ours to keep; read (bounded by the timeout) so the connection is reusable.
    await res.arrayBuffer().catch(() => undefined);
  } catch (err) {
    if (d.cancel?.aborted && !timeout.aborted) return { kind: "released" };
    const latencyMs = Math.round(performance.now() - started);
    const error = signal.aborted ? `timed out after ${d.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms` : `connection failed: ${err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err)}`;
    return { kind: "attempted", ok: false, route, statusCode: null, latencyMs, error };
  }
  const latencyMs = Math.round(performance.now() - started);
  const status = res.status;
  if (status >= 200 && status < 300) return { kind: "attempted", ok: true, route, statusCode: status, latencyMs, error: null };
  const base = { kind: "attempted" as const, ok: false, route, statusCode: status, latencyMs };
  if (status >= 300 && status < 400) return { ...base, error: `redirect (HTTP ${status}) not followed` };
  if (status === 410) return { ...base, error: "HTTP 410 Gone: the endpoint was disabled", gone: true };
  const retryAfterMs = status === 429 || status === 502 || status === 504 ? parseRetryAfter(res.headers.get("retry-after"), now) : undefined;
  return { ...base, error: `HTTP ${status}`, retryAfterMs };
}

/** Sends one claimed message and records the outcome; errors are logged, the lease retries it. */
export async function deliverOne(d: OutboxWorkerDeps, msg: ClaimedMessage): Promise<void> {
  if (msg.channel === "engine") return deliverRun(d, msg);
  if (msg.channel !== "webhook") {
    d.logger.error("outbox message of a channel without a sender", { messageId: msg.id, channel: msg.channel });
    return;
  }
  const [row] = await d.db.select().from(partners).where(eq(partners.id, msg.target_id));
  const attempt = await sendWebhook(d, msg, row);
  const now = d.clock.now();
  const at = new Date(now);
  if (attempt.kind === "released") {
    // Cut by a shutdown, not by the endpoint: due again at once for the next worker, no attempt spent.
    await d.db.update(outboxMessages).set({ nextAttemptAt: at }).where(eq(outboxMessages.id, msg.id));
    return;
  }
  await d.db.transaction(async (tx) => {
    if (attempt.kind === "skipped") {
      await tx.update(outboxMessages).set({ status: "failed", nextAttemptAt: null, lastError: attempt.error }).where(eq(outboxMessages.id, msg.id));
      return;
    }
    await d.records.record(tx, {
      channel: "webhook",
      route: attempt.route,
      outcome: attempt.ok ? "delivered" : "failed",
      latencyMs: attempt.latencyMs,
      statusCode: attempt.statusCode,
      error: attempt.error,
      messageId: msg.id,
      occurredAt: now,
    });
    const attempts = msg.attempts + 1;
    if (attempt.ok) {
      await tx.update(outboxMessages).set({ status: "delivered", attempts, lastAttemptAt: at, deliveredAt: at, nextAttemptAt: null, lastError: null }).where(eq(outboxMessages.id, msg.id));
      await tx.update(partners).set({ webhookFailingSince: null }).where(eq(partners.id, msg.target_id));
      return;
    }
    const delay = attempt.gone || attempts >= MAX_ATTEMPTS ? null : nextDelayMs(attempts, d.random, attempt.retryAfterMs);
    await tx
      .update(outboxMessages)
      .set({ status: delay === null ? "failed" : "pending", attempts, lastAttemptAt: at, nextAttemptAt: delay === null ? null : new Date(now + delay), lastError: attempt.error })
      .where(eq(outboxMessages.id, msg.id));
    const [partner] = await tx
      .update(partners)
      .set({ webhookFailingSince: sql`coalesce(${partners.webhookFailingSince}, ${at.toISOString()}::timestamptz)` })
      .where(eq(partners.id, msg.target_id))
      .returning({ failingSince: partners.webhookFailingSince, enabled: partners.webhookEnabled });
    const failingTooLong = partner?.failingSince && now - partner.failingSince.getTime() >= DISABLE_AFTER_MS;
    if (partner?.enabled && (attempt.gone || failingTooLong)) {
      const reason = attempt.gone ? "the endpoint answered 410 Gone" : "the endpoint failed every delivery for 5 days";
      await tx.update(partners).set({ webhookEnabled: false, webhookDisabledReason: reason, webhookDisabledAt: at }).where(eq(partners.id, msg.target_id));
      d.logger.warn("partner webhook disabled", { partnerId: msg.target_id, reason });
    }
  });
}

/** One pass: claims up to `limit` due messages and sends them side by side. Returns how many. */
export async function deliverDue(d: OutboxWorkerDeps, limit = 100, only?: readonly string[]): Promise<number> {
  const claimed = await claimDue(d, limit, only);
  await Promise.all(
    claimed.map((msg) =>
      deliverOne(d, msg).catch((err: unknown) => d.logger.error("outbox delivery failed", { messageId: msg.id, error: err instanceof Error ? err.message : String(err) })),
    ),
  );
  return claimed.length;
}
