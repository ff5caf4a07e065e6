import { and, inArray, isNotNull, lte, sql } from "drizzle-orm";
import type { Config } from "../../config";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import { messagingWorkflows, workflowRuns } from "../../db/tables/workflows";
import type { IdGenerator, Random } from "../../platform/ids";
import type { Logger } from "../../platform/logger";
import type { WorkflowGraph } from "./graph";
import { insertRun, runEngineOf } from "./runs";

/**
 * The platform events that can start runs: the matching events stored in the `events` table, and
 * a subscription's start, read from its charge (`subscription_charges`: each purchase of a plan
 * starts or extends a paid period).
 */
export const STORED_EVENTS = ["match.created", "wink.received", "wink.accepted", "subscription.started"] as const;
/** How far back a pass looks: a scheduler down longer than this misses the older events. */
export const EVENT_LOOKBACK_MS = 24 * 3_600_000;
/**
 * How far before the last complete pass the next one looks again: an event is stored with the
 * time its transaction began and may commit a little later, after a pass that did not yet see it.
 */
export const EVENT_SETTLE_MS = 10 * 60_000;
/** How stale the mark may grow before a pass moves it: a pass reads at most this plus the settling time. */
const MARK_EVERY_MS = 60_000;
/** Events taken per workflow and pass; the next pass goes on with the rest. */
const EVENTS_PER_PASS = 500;

export interface RunScheduleDeps {
  db: Db;
  config: Config;
  ids: IdGenerator;
  random: Random;
  now: number;
  logger: Logger;
}

type EventRow = { id: string; user_id: string; type: string; data: Record<string, unknown> | string; email: string | null; display_name: string | null };

/**
 * Starts a run of every synced workflow whose trigger names a stored event, for each such event
 * stored since the workflow was first synced. The unique `(workflow_id, event_id)` makes this
 * exactly once however many passes run side by side: a second insert of the same pair waits for
 * the first to commit and then inserts nothing, and only an insert enqueues a hand-over.
 * Returns how many runs were started.
 */
export async function startEventRuns(d: RunScheduleDeps): Promise<number> {
  const engine = runEngineOf(d.config);
  if ("missing" in engine) return 0;
  const workflows = await d.db
    .select({
      id: messagingWorkflows.id,
      graph: messagingWorkflows.graph,
      syncedVersion: messagingWorkflows.syncedVersion,
      activatedAt: messagingWorkflows.activatedAt,
      eventsScannedTo: messagingWorkflows.eventsScannedTo,
    })
    .from(messagingWorkflows)
    .where(and(isNotNull(messagingWorkflows.activatedAt), isNotNull(messagingWorkflows.engineId)));
  let started = 0;
  for (const wf of workflows) {
    const trigger = wf.graph.nodes.find((n) => n.type === "trigger");
    const event = trigger?.type === "trigger" ? trigger.data.event : undefined;
    if (!event || !(STORED_EVENTS as readonly string[]).includes(event) || !wf.activatedAt || wf.syncedVersion === null) continue;
    // From the last complete pass (less the settling time) rather than the whole lookback, so a
    // pass reads minutes of events, not a day's, and probes the runs of none it already started.
    const scannedTo = wf.eventsScannedTo ? wf.eventsScannedTo.getTime() - EVENT_SETTLE_MS : 0;
    const since = new Date(Math.max(wf.activatedAt.getTime(), d.now - EVENT_LOOKBACK_MS, scannedTo)).toISOString();
    // A workflow has one trigger, so its runs' event ids come from one source and cannot collide.
    const events =
      event === "subscription.started"
        ? await queryRows<EventRow>(
            d.db,
            sql`select c.seq::text as id, c.user_id, ${event} as type,
                       jsonb_build_object('planId', c.plan_id, 'coins', c.coins, 'transactionId', c.transaction_id) as data, u.email, u.display_name
                from subscription_charges c join users u on u.id = c.user_id
                where c.created_at >= ${since}::timestamptz
                  and not exists (select 1 from workflow_runs r where r.workflow_id = ${wf.id} and r.event_id = c.seq)
                order by c.seq limit ${EVENTS_PER_PASS}`,
          )
        : await queryRows<EventRow>(
            d.db,
            sql`select e.id::text as id, e.user_id, e.type, e.data, u.email, u.display_name
                from events e join users u on u.id = e.user_id
                where e.created_at >= ${since}::timestamptz and e.type = ${event}
                  and not exists (select 1 from workflow_runs r where r.workflow_id = ${wf.id} and r.event_id = e.id)
                order by e.id limit ${EVENTS_PER_PASS}`,
          );
    for (const e of events) {
      const data = typeof e.data === "string" ? (JSON.parse(e.data) as Record<string, unknown>) : e.data;
      const input = { userId: e.user_id, email: e.email, displayName: e.display_name, event: { id: Number(e.id), type: e.type, data } };
      const runId = await d.db.transaction((tx) =>
        insertRun(tx, d, engine, { workflowId: wf.id, workflowVersion: wf.syncedVersion ?? 1, graph: wf.graph as WorkflowGraph, trigger: event, eventId: Number(e.id), input }),
      );
      if (runId) started++;
    }
    // Everything up to this pass's start is started (a full batch leaves more for the next pass).
    // Passes side by side may finish in any order, so the mark only moves forward; it moves once a
    // minute at most, not with every 5-second pass.
    const markStale = !wf.eventsScannedTo || d.now - wf.eventsScannedTo.getTime() >= MARK_EVERY_MS;
    if (events.length < EVENTS_PER_PASS && markStale) {
      await d.db.execute(sql`update messaging_workflows set events_scanned_to = greatest(events_scanned_to, ${new Date(d.now).toISOString()}::timestamptz) where id = ${wf.id}`);
    }
  }
  if (started) d.logger.info("workflow runs started by events", { started });
  return started;
}

/** Ends runs whose deadline passed without a final callback (`queued|running → timed_out`). */
export async function timeOutRuns(d: Pick<RunScheduleDeps, "db" | "now">): Promise<number> {
  const at = new Date(d.now);
  const ended = await d.db
    .update(workflowRuns)
    .set({ status: "timed_out", finishedAt: at, updatedAt: at, error: "no final status came from the automation engine before the deadline" })
    .where(and(inArray(workflowRuns.status, ["queued", "running"]), lte(workflowRuns.deadlineAt, at)))
    .returning({ id: workflowRuns.id });
  return ended.length;
}

/** One scheduled pass: event runs, then time-outs. */
export async function runWorkflowSchedule(d: RunScheduleDeps): Promise<void> {
  await startEventRuns(d);
  await timeOutRuns(d);
}
