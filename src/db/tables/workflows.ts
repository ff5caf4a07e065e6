import { sql } from "drizzle-orm";
import { bigint, check, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { users } from "../schema";
import type { WorkflowGraph } from "../../services/workflows/graph";

const at = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

/**
 * Messaging workflows admins draw. The graph is stored whole as jsonb with a version that counts
 * its changes, so the engine's copy can be known to be current (`synced_version = version`).
 */
export const messagingWorkflows = pgTable(
  "messaging_workflows",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    description: text("description"),
    graph: jsonb("graph").$type<WorkflowGraph>().notNull(),
    version: integer("version").notNull().default(1),
    /** The automation engine's id of its copy; null until the first sync. */
    engineId: text("engine_id"),
    syncedVersion: integer("synced_version"),
    syncedAt: at("synced_at"),
    /** The first successful sync: platform events stored from then on start runs. */
    activatedAt: at("activated_at"),
    /** Where the last complete pass over platform events ended (run-schedule.ts): the next one reads from a little before. */
    eventsScannedTo: at("events_scanned_to"),
    createdBy: text("created_by")
      .notNull()
      .references(() => users.id),
    createdAt: at("created_at").notNull(),
    updatedAt: at("updated_at").notNull(),
  },
  (t) => [index("messaging_workflows_created_idx").on(t.createdAt, t.id)],
);

export type DeliveryOutcome = { nodeId: string; channel: string; route: string; status: "sent" | "delivered" | "failed"; latencyMs: number | null; at: string };

/**
 * One run of a workflow. The callback token is kept only as its HMAC under
 * WORKFLOW_CALLBACK_SECRET; `(workflow_id, event_id)` is unique so a platform event starts a
 * workflow once however many passes see it.
 */
export const workflowRuns = pgTable(
  "workflow_runs",
  {
    id: text("id").primaryKey(),
    workflowId: text("workflow_id")
      .notNull()
      .references(() => messagingWorkflows.id),
    /** The engine's version the run was handed to. */
    workflowVersion: integer("workflow_version").notNull(),
    /** `manual`, or the platform event that started it. */
    trigger: text("trigger").notNull(),
    eventId: bigint("event_id", { mode: "number" }),
    input: jsonb("input").$type<Record<string, unknown>>().notNull(),
    status: text("status").notNull(),
    tokenHash: text("token_hash").notNull(),
    error: text("error"),
    deliveries: jsonb("deliveries").$type<DeliveryOutcome[]>().notNull().default(sql`'[]'::jsonb`),
    createdBy: text("created_by").references(() => users.id),
    createdAt: at("created_at").notNull(),
    startedAt: at("started_at"),
    finishedAt: at("finished_at"),
    updatedAt: at("updated_at").notNull(),
    /** Past it without a final callback, the run is timed out. */
    deadlineAt: at("deadline_at").notNull(),
  },
  (t) => [
    check("workflow_runs_status_check", sql`${t.status} in ('queued', 'running', 'succeeded', 'failed', 'timed_out')`),
    uniqueIndex("workflow_runs_event_idx").on(t.workflowId, t.eventId),
    index("workflow_runs_list_idx").on(t.workflowId, t.createdAt, t.id),
    index("workflow_runs_open_idx").on(t.deadlineAt).where(sql`${t.status} in ('queued', 'running')`),
    // Finished runs by their end, for the retention (services/workflows/run-retention.ts).
    index("workflow_runs_finished_idx").on(t.finishedAt).where(sql`${t.status} in ('succeeded', 'failed', 'timed_out')`),
    // The runs a member's platform events started (their name and address are in the input) and
    // those a staff member started by hand, found at erasure without reading every run. Not
    // partial: the planner uses the statistics of an indexed expression only from an index that is
    // not, and with them knows how few runs one member has.
    index("workflow_runs_member_idx").on(sql`(${t.input}->>'userId')`),
    index("workflow_runs_created_by_idx").on(t.createdBy).where(sql`${t.createdBy} is not null`),
  ],
);
