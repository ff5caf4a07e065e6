import { and, desc, eq, lt, or } from "drizzle-orm";
import type { Config } from "../../config";
import type { Db } from "../../db/port";
import { workflowRuns, type DeliveryOutcome } from "../../db/tables/workflows";
import { ApiError } from "../../errors";
import { assertAdmin, type Principal } from "../../auth/principal";
import type { IdGenerator, Random } from "../../platform/ids";
import { decodeTimeCursor, encodeTimeCursor } from "../../platform/time-cursor";
import { recordAudit } from "../audit/log";
import { completeKeyWithEffect, type IdempotencyHandle } from "../idempotency/keys";
import { withOutbox, type OutboxDispatch } from "../outbox/dispatch";
import { enqueue } from "../outbox/enqueue";
import type { Tx } from "../wallet/ledger";
import type { WorkflowGraph } from "./graph";
import { callbackTokenHash, newCallbackToken } from "./run-token";
import { getWorkflow } from "./workflows";

export const RUN_STATUSES = ["queued", "running", "succeeded", "failed", "timed_out"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const STATUS_PATH = "/api/v1/messaging/workflows/status";
/** Beyond the workflow's own waits, how long a run may take before it is timed out. */
export const RUN_GRACE_MS = 60 * 60_000;
/** The largest `input` a run takes, as JSON. */
export const MAX_INPUT_BYTES = 16 * 1024;

export type RunRow = typeof workflowRuns.$inferSelect;

export interface RunView {
  runId: string;
  workflowId: string;
  workflowVersion: number;
  trigger: string;
  eventId: number | null;
  status: RunStatus;
  input: Record<string, unknown>;
  error: string | null;
  deliveries: DeliveryOutcome[];
  createdBy: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  updatedAt: string;
  deadlineAt: string;
}

export function runView(r: RunRow): RunView {
  return {
    runId: r.id,
    workflowId: r.workflowId,
    workflowVersion: r.workflowVersion,
    trigger: r.trigger,
    eventId: r.eventId,
    status: r.status as RunStatus,
    input: r.input,
    error: r.error,
    deliveries: r.deliveries,
    createdBy: r.createdBy,
    createdAt: r.createdAt.toISOString(),
    startedAt: r.startedAt?.toISOString() ?? null,
    finishedAt: r.finishedAt?.toISOString() ?? null,
    updatedAt: r.updatedAt.toISOString(),
    deadlineAt: r.deadlineAt.toISOString(),
  };
}

/** What handing a run to the engine needs; null names the missing variable. */
export interface RunEngine {
  secret: string;
  statusUrl: string;
}

/**
 * The engine's webhook base and the callback secret are required; the status URL is
 * WORKFLOW_STATUS_URL, or (outside production) the calling request's own origin.
 */
export function runEngineOf(config: Config, origin?: string): RunEngine | { missing: string } {
  if (!config.N8N_WEBHOOK_URL && !config.N8N_URL) return { missing: "N8N_URL" };
  if (!config.WORKFLOW_CALLBACK_SECRET) return { missing: "WORKFLOW_CALLBACK_SECRET" };
  const statusUrl = config.WORKFLOW_STATUS_URL ?? (origin && config.NODE_ENV !== "production" ? `${origin}${STATUS_PATH}` : undefined);
  if (!statusUrl) return { missing: "WORKFLOW_STATUS_URL" };
  return { secret: config.WORKFLOW_CALLBACK_SECRET, statusUrl };
}

/** The longest sum of waits on any path from the trigger: a run cannot finish sooner. */
export function longestWaitMs(graph: WorkflowGraph): number {
  const memo = new Map<string, number>();
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const walk = (id: string): number => {
    const known = memo.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    const own = node?.type === "delay" ? node.data.minutes * 60_000 : 0;
    // Validated graphs have no cycle, so the recursion ends; 100 nodes bound its depth.
    const after = Math.max(0, ...graph.edges.filter((e) => e.source === id).map((e) => walk(e.target)));
    memo.set(id, own + after);
    return own + after;
  };
  const trigger = graph.nodes.find((n) => n.type === "trigger");
  return trigger ? walk(trigger.id) : 0;
}

export interface NewRun {
  workflowId: string;
  workflowVersion: number;
  graph: WorkflowGraph;
  trigger: string;
  eventId?: number;
  input: Record<string, unknown>;
  createdBy?: string;
}

/**
 * Persists a queued run and, in the same transaction, its hand-over to the engine through the
 * outbox. An event run that already exists (the unique `(workflow_id, event_id)`) is left alone:
 * returns null, and nothing is enqueued.
 */
export async function insertRun(tx: Tx, ctx: { ids: IdGenerator; random: Random; now: number }, engine: RunEngine, run: NewRun, queued?: string[]): Promise<string | null> {
  const id = ctx.ids.next("wfr");
  const token = newCallbackToken(ctx.random);
  const at = new Date(ctx.now);
  const [inserted] = await tx
    .insert(workflowRuns)
    .values({
      id,
      workflowId: run.workflowId,
      workflowVersion: run.workflowVersion,
      trigger: run.trigger,
      eventId: run.eventId ?? null,
      input: run.input,
      status: "queued",
      tokenHash: await callbackTokenHash(engine.secret, token),
      createdBy: run.createdBy ?? null,
      createdAt: at,
      updatedAt: at,
      deadlineAt: new Date(ctx.now + longestWaitMs(run.graph) + RUN_GRACE_MS),
    })
    .onConflictDoNothing()
    .returning({ id: workflowRuns.id });
  if (!inserted) return null;
  const messageId = await enqueue(tx, ctx, {
    kind: "workflow.run",
    targetId: run.workflowId,
    data: { runId: id, workflowId: run.workflowId, input: run.input, statusUrl: engine.statusUrl, callbackToken: token },
  });
  queued?.push(messageId);
  return id;
}

export interface StartRunDeps {
  db: Db;
  ids: IdGenerator;
  random: Random;
  now: number;
  config: Config;
  requestId: string;
  idempotency?: IdempotencyHandle;
  /** The calling request's origin, the status URL's default outside production. */
  origin?: string;
  /** Where the hand-over's id goes once the run is stored (Workers: the outbox queue). */
  dispatch?: OutboxDispatch;
}

/** `POST …/{workflowId}/run`: 202 once the run and its hand-over are stored. */
export async function startRun(d: StartRunDeps, actor: Principal, workflowId: string, input: Record<string, unknown>): Promise<{ runId: string; status: "queued" }> {
  const wf = await getWorkflow(d, actor, workflowId);
  const engine = runEngineOf(d.config, d.origin);
  if ("missing" in engine) throw new ApiError("service_unavailable", `the automation engine (n8n) is not configured (${engine.missing})`);
  if (wf.syncedVersion === null || !wf.engineId) throw new ApiError("conflict", "the workflow is not in the automation engine yet: sync it first");
  if (new TextEncoder().encode(JSON.stringify(input)).length > MAX_INPUT_BYTES) {
    throw new ApiError("invalid_input", "input is too large", { details: [{ path: "input", message: `at most ${MAX_INPUT_BYTES} bytes as JSON` }] });
  }
  return withOutbox(d, async (tx, queued) => {
    // The run takes the engine's version: what the engine runs is what was last synced.
    const runId = await insertRun(tx, d, engine, { workflowId: wf.id, workflowVersion: wf.syncedVersion ?? wf.version, graph: wf.graph, trigger: "manual", input, createdBy: actor.userId }, queued);
    if (!runId) throw new Error("a manual run collided with an existing run");
    await recordAudit(tx, d.ids, { actor, requestId: d.requestId }, d.now, { action: "workflow.run", targetType: "workflow", targetId: wf.id, details: { runId, version: wf.syncedVersion } });
    const result = { runId, status: "queued" as const };
    if (d.idempotency) await completeKeyWithEffect(tx, d.idempotency, 202, result, d.now);
    return result;
  });
}

/** `GET …/{workflowId}/runs`: newest first, keyset-paged like every list. */
export async function listRuns(d: { db: Db }, actor: Principal, workflowId: string, limit: number, cursor?: string): Promise<{ runs: RunView[]; nextCursor: string | null }> {
  assertAdmin(actor);
  const after = cursor === undefined ? undefined : decodeTimeCursor(cursor);
  await getWorkflow(d, actor, workflowId);
  const t = workflowRuns;
  const rows = await d.db
    .select()
    .from(t)
    .where(and(eq(t.workflowId, workflowId), after ? or(lt(t.createdAt, after.at), and(eq(t.createdAt, after.at), lt(t.id, after.id))) : undefined))
    .orderBy(desc(t.createdAt), desc(t.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { runs: page.map(runView), nextCursor: rows.length > limit && last ? encodeTimeCursor(last.createdAt, last.id) : null };
}
