import { eq, sql } from "drizzle-orm";
import type { Config } from "../../config";
import type { Db } from "../../db/port";
import { workflowRuns, type DeliveryOutcome } from "../../db/tables/workflows";
import { ApiError } from "../../errors";
import type { DeliveryChannel, DeliveryRecordWriter } from "../delivery-records/records";
import { bodySignatureMatches, callbackTokenMatches } from "./run-token";
import { runView, type RunStatus, type RunView } from "./runs";

export interface CallbackDeps {
  db: Db;
  config: Config;
  records: DeliveryRecordWriter;
  now: number;
}

export interface CallbackInput {
  runId: string;
  status: "running" | "succeeded" | "failed";
  startedAt?: string;
  finishedAt?: string;
  error?: string;
  deliveries?: { nodeId: string; channel: "push" | "email" | "sms" | "in_app"; route: string; status: "sent" | "delivered" | "failed"; latencyMs?: number | null }[];
}

const unauthorized = () => new ApiError("unauthorized", "the callback carries no valid run token or body signature");

/**
 * Who may report a run's state: the bearer of that run's token, or anyone who signs the raw body
 * with WORKFLOW_CALLBACK_SECRET (`X-Workflow-Signature: sha256=<hex>`). Checked before the body's
 * shape, so an unauthenticated caller learns nothing about it. Without the secret no run can
 * exist, so nothing verifies.
 */
export async function authenticateCallback(d: Pick<CallbackDeps, "db" | "config">, rawBody: string, authorization: string | undefined, signature: string | undefined): Promise<void> {
  const secret = d.config.WORKFLOW_CALLBACK_SECRET;
  if (!secret) throw unauthorized();
  if (signature !== undefined) {
    if (await bodySignatureMatches(secret, rawBody, signature)) return;
    throw unauthorized();
  }
  const token = /^Bearer\s+([0-9a-f]{64})\s*$/i.exec(authorization ?? "")?.[1];
  if (!token) throw unauthorized();
  let runId: unknown;
  try {
    runId = (JSON.parse(rawBody) as { runId?: unknown } | null)?.runId;
  } catch {
    throw unauthorized();
  }
  if (typeof runId !== "string" || runId.length > 64) throw unauthorized();
  const [run] = await d.db.select({ tokenHash: workflowRuns.tokenHash }).from(workflowRuns).where(eq(workflowRuns.id, runId));
  // An unknown run and a wrong token answer alike: a token is no way to probe for run ids.
  if (!run || !(await callbackTokenMatches(secret, run.tokenHash, token.toLowerCase()))) throw unauthorized();
}

const FINAL: readonly RunStatus[] = ["succeeded", "failed", "timed_out"];

/**
 * What a reported status does to the run: `apply` moves it, `noop` keeps it (a replay, or a late
 * `running` after the end), `conflict` is impossible (one end replaced by another).
 */
export function transition(from: RunStatus, to: CallbackInput["status"]): "apply" | "noop" | "conflict" {
  if (from === to) return "noop";
  if (FINAL.includes(from)) return to === "running" ? "noop" : "conflict";
  if (from === "running" && to === "running") return "noop";
  return "apply";
}

const time = (iso: string | undefined, fallback: number) => (iso ? new Date(iso) : new Date(fallback));

/**
 * Applies one status report under the run's row lock, so two reports of one run are applied one
 * after the other. Deliveries are recorded only with a report that moves the run, so a replayed
 * report records nothing twice.
 */
export async function applyCallback(d: CallbackDeps, input: CallbackInput): Promise<RunView & { changed: boolean }> {
  return d.db.transaction(async (tx) => {
    const [run] = await tx.select().from(workflowRuns).where(eq(workflowRuns.id, input.runId)).for("update");
    if (!run) throw new ApiError("not_found", "no such run");
    const move = transition(run.status as RunStatus, input.status);
    if (move === "conflict") throw new ApiError("conflict", `the run already ended as ${run.status}; it cannot become ${input.status}`);
    if (move === "noop") return { ...runView(run), changed: false };

    const at = new Date(d.now);
    const outcomes: DeliveryOutcome[] = (input.deliveries ?? []).map((x) => ({ nodeId: x.nodeId, channel: x.channel, route: x.route, status: x.status, latencyMs: x.latencyMs ?? null, at: at.toISOString() }));
    for (const o of outcomes) {
      await d.records.record(tx, { channel: o.channel as DeliveryChannel, route: o.route, outcome: o.status, latencyMs: o.latencyMs, messageId: run.id, occurredAt: d.now });
    }
    const final = input.status !== "running";
    const [updated] = await tx
      .update(workflowRuns)
      .set({
        status: input.status,
        startedAt: run.startedAt ?? time(input.startedAt, d.now),
        finishedAt: final ? time(input.finishedAt, d.now) : null,
        error: input.status === "failed" ? (input.error ?? "the automation engine reported a failure").slice(0, 1000) : null,
        deliveries: outcomes.length ? sql`${workflowRuns.deliveries} || ${JSON.stringify(outcomes)}::jsonb` : undefined,
        updatedAt: at,
      })
      .where(eq(workflowRuns.id, run.id))
      .returning();
    if (!updated) throw new Error("a locked run vanished");
    return { ...runView(updated), changed: true };
  });
}
