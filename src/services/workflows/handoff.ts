import { and, eq } from "drizzle-orm";
import { outboxMessages } from "../../db/tables/partners";
import { workflowRuns } from "../../db/tables/workflows";
import type { ClaimedMessage, OutboxWorkerDeps } from "../outbox/worker";
import { MAX_ATTEMPTS, nextDelayMs, parseRetryAfter } from "../outbox/retry";

const DEFAULT_TIMEOUT_MS = 15_000;

type Sent = { ok: true } | { ok: false; error: string; retryAfterMs?: number } | { released: true };

/** The outbox body without the run's token: once the message is settled nobody needs it again. */
function withoutToken(body: string): string {
  const parsed = JSON.parse(body) as { data?: Record<string, unknown> };
  if (parsed.data) delete parsed.data.callbackToken;
  return JSON.stringify(parsed);
}

async function post(d: OutboxWorkerDeps, url: string, body: string): Promise<Sent> {
  const timeout = AbortSignal.timeout(d.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const signal = d.cancel ? AbortSignal.any([timeout, d.cancel]) : timeout;
  try {
    const res = await (d.engine?.fetch ?? d.fetch)(url, { method: "POST", headers: { "content-type": "application/json" }, body, redirect: "manual", signal });
    const text = await res.text().catch(() => "");
    if (res.status >= 200 && res.status < 300) return { ok: true };
    const message = (() => {
      try {
        const m = (JSON.parse(text) as { message?: unknown }).message;
        return typeof m === "string" ? `: ${m.slice(0, 200)}` : "";
      } catch {
        return "";
      }
    })();
    const retryAfterMs = res.status === 429 || res.status === 503 ? parseRetryAfter(res.headers.get("retry-after"), d.clock.now()) : undefined;
    return { ok: false, error: `HTTP ${res.status}${message}`, retryAfterMs };
  } catch (err) {
    if (d.cancel?.aborted && !timeout.aborted) return { released: true };
    return { ok: false, error: timeout.aborted ? `timed out after ${d.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms` : `connection failed: ${err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err)}` };
  }
}

/**
 * The outbox's sender of the `engine` channel: hands a workflow run to the engine's production
 * webhook of the workflow (`<N8N_WEBHOOK_URL>/<workflowId>`) with the message's `data` as the body.
 * A run that is no longer queued is not handed over again (an earlier attempt reached the engine,
 * or the run timed out). When the attempts are used up the run fails with the last error.
 */
export async function deliverRun(d: OutboxWorkerDeps, msg: ClaimedMessage): Promise<void> {
  const { data } = JSON.parse(msg.body) as { data: { runId: string; workflowId: string } };
  const now = d.clock.now();
  const at = new Date(now);
  const [run] = await d.db.select({ status: workflowRuns.status }).from(workflowRuns).where(eq(workflowRuns.id, data.runId));
  if (!run || run.status !== "queued") {
    const reached = run?.status === "running" || run?.status === "succeeded";
    await d.db
      .update(outboxMessages)
      .set({ status: reached ? "delivered" : "failed", nextAttemptAt: null, deliveredAt: reached ? at : null, lastError: reached ? null : `the run is ${run?.status ?? "gone"}`, body: withoutToken(msg.body) })
      .where(eq(outboxMessages.id, msg.id));
    return;
  }
  const base = d.engine?.webhookUrl;
  const sent: Sent = base ? await post(d, `${base.replace(/\/+$/, "")}/${encodeURIComponent(data.workflowId)}`, JSON.stringify(data)) : { ok: false, error: "the automation engine is not configured (N8N_URL)" };
  if ("released" in sent) {
    await d.db.update(outboxMessages).set({ nextAttemptAt: at }).where(eq(outboxMessages.id, msg.id));
    return;
  }
  const attempts = msg.attempts + 1;
  await d.db.transaction(async (tx) => {
    if (sent.ok) {
      await tx.update(outboxMessages).set({ status: "delivered", attempts, lastAttemptAt: at, deliveredAt: at, nextAttemptAt: null, lastError: null, body: withoutToken(msg.body) }).where(eq(outboxMessages.id, msg.id));
      return;
    }
    const delay = attempts >= MAX_ATTEMPTS ? null : nextDelayMs(attempts, d.random, sent.retryAfterMs);
    await tx
      .update(outboxMessages)
      .set({ status: delay === null ? "failed" : "pending", attempts, lastAttemptAt: at, nextAttemptAt: delay === null ? null : new Date(now + delay), lastError: sent.error, ...(delay === null ? { body: withoutToken(msg.body) } : {}) })
      .where(eq(outboxMessages.id, msg.id));
    if (delay === null) {
      await tx
        .update(workflowRuns)
        .set({ status: "failed", finishedAt: at, updatedAt: at, error: `the automation engine did not take the run: ${sent.error}`.slice(0, 1000) })
        .where(and(eq(workflowRuns.id, data.runId), eq(workflowRuns.status, "queued")));
    }
  });
}
