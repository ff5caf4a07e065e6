import { and, desc, eq, lt, or } from "drizzle-orm";
import type { Db } from "../../db/port";
import { messagingWorkflows } from "../../db/tables/workflows";
import { ApiError } from "../../errors";
import { decodeTimeCursor, encodeTimeCursor } from "../../platform/time-cursor";
import { assertAdmin, type Principal } from "../../auth/principal";
import type { IdGenerator } from "../../platform/ids";
import { recordAudit } from "../audit/log";
import { graphIssues, type RawGraph, type WorkflowGraph } from "./graph";

export interface WorkflowServiceDeps {
  db: Db;
  ids: IdGenerator;
  now: number;
  requestId: string;
}

export interface WorkflowInput extends RawGraph {
  name: string;
  description?: string;
}

export type WorkflowRow = typeof messagingWorkflows.$inferSelect;

export interface WorkflowSummary {
  workflowId: string;
  name: string;
  description: string | null;
  version: number;
  nodeCount: number;
  engineWorkflowId: string | null;
  syncedVersion: number | null;
  syncedAt: string | null;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
}

export function summaryOf(row: WorkflowRow): WorkflowSummary {
  return {
    workflowId: row.id,
    name: row.name,
    description: row.description,
    version: row.version,
    nodeCount: row.graph.nodes.length,
    engineWorkflowId: row.engineId,
    syncedVersion: row.syncedVersion,
    syncedAt: row.syncedAt?.toISOString() ?? null,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** Saves a draft. A graph with any problem is refused whole, every problem named by node or edge id. */
export async function createWorkflow(d: WorkflowServiceDeps, actor: Principal, input: WorkflowInput): Promise<WorkflowRow> {
  assertAdmin(actor);
  const issues = graphIssues(input);
  if (issues.length) throw new ApiError("invalid_input", `the workflow graph has ${issues.length} problem${issues.length === 1 ? "" : "s"}`, { details: issues });
  const at = new Date(d.now);
  // Stored as sent, less unknown keys: the checks above make the raw graph a WorkflowGraph.
  const graph = {
    nodes: input.nodes.map(({ id, type, data }) => ({ id, type, data })),
    edges: input.edges.map(({ id, source, target, label }) => (label === undefined ? { id, source, target } : { id, source, target, label })),
  } as WorkflowGraph;
  return d.db.transaction(async (tx) => {
    const [row] = await tx
      .insert(messagingWorkflows)
      .values({ id: d.ids.next("wfl"), name: input.name, description: input.description ?? null, graph, version: 1, createdBy: actor.userId, createdAt: at, updatedAt: at })
      .returning();
    if (!row) throw new Error("workflow insert returned no row");
    await recordAudit(tx, d.ids, { actor, requestId: d.requestId }, at, { action: "workflow.create", targetType: "workflow", targetId: row.id, details: { name: row.name, nodeCount: graph.nodes.length } });
    return row;
  });
}

export async function getWorkflow(d: Pick<WorkflowServiceDeps, "db">, actor: Principal, workflowId: string): Promise<WorkflowRow> {
  assertAdmin(actor);
  const [row] = await d.db.select().from(messagingWorkflows).where(eq(messagingWorkflows.id, workflowId));
  if (!row) throw new ApiError("not_found", "no such workflow");
  return row;
}

/** Newest first. */
export async function listWorkflows(d: Pick<WorkflowServiceDeps, "db">, actor: Principal, limit: number, cursor?: string): Promise<{ workflows: WorkflowSummary[]; nextCursor: string | null }> {
  assertAdmin(actor);
  const after = cursor === undefined ? undefined : decodeTimeCursor(cursor);
  const t = messagingWorkflows;
  const rows = await d.db
    .select()
    .from(t)
    .where(after ? or(lt(t.createdAt, after.at), and(eq(t.createdAt, after.at), lt(t.id, after.id))) : undefined)
    .orderBy(desc(t.createdAt), desc(t.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { workflows: page.map(summaryOf), nextCursor: rows.length > limit && last ? encodeTimeCursor(last.createdAt, last.id) : null };
}
