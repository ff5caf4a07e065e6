import { eq, sql } from "drizzle-orm";
import type { Config } from "../../config";
import type { Db } from "../../db/port";
import { messagingWorkflows } from "../../db/tables/workflows";
import { ApiError } from "../../errors";
import type { Principal } from "../../auth/principal";
import { compileWorkflow } from "./compile";
import { compileOptionsFrom } from "./engine-config";
import { createN8nClient } from "./n8n-client";
import { getWorkflow, type WorkflowRow } from "./workflows";
import type { IdGenerator } from "../../platform/ids";
import { recordAudit } from "../audit/log";

export interface SyncDeps {
  db: Db;
  config: Config;
  fetch: typeof fetch;
  now: number;
  ids: IdGenerator;
  requestId: string;
}

/**
 * Creates the engine's copy (or replaces it whole: n8n has no partial update), then activates it
 * so its production webhook answers. Repeating it converges on the same engine workflow.
 */
export async function syncWorkflow(d: SyncDeps, actor: Principal, workflowId: string): Promise<WorkflowRow> {
  const row = await getWorkflow(d, actor, workflowId);
  const { N8N_URL, N8N_API_KEY } = d.config;
  if (!N8N_URL || !N8N_API_KEY) throw new ApiError("service_unavailable", "the automation engine (n8n) is not configured");
  const options = compileOptionsFrom(d.config);
  const channels = new Set(row.graph.nodes.flatMap((n) => (n.type === "send_message" ? [n.data.channel] : [])));
  if (!options.gatewayUrl && [...channels].some((c) => c !== "email")) throw new ApiError("service_unavailable", "the messaging gateway is not configured (MESSAGING_GATEWAY_URL)");
  if (!options.emailFrom && channels.has("email")) throw new ApiError("service_unavailable", "the email sender is not configured (MESSAGING_EMAIL_FROM)");

  const client = createN8nClient({ url: N8N_URL, apiKey: N8N_API_KEY, fetch: d.fetch });
  const body = compileWorkflow(row.id, row.name, row.graph, options);
  const { id: engineId } = row.engineId ? await client.replace(row.engineId, body) : await client.create(body);
  // Stored before activation: a failed activation is retried against the same engine workflow.
  await d.db.update(messagingWorkflows).set({ engineId }).where(eq(messagingWorkflows.id, row.id));
  await client.activate(engineId);
  const at = new Date(d.now);
  return d.db.transaction(async (tx) => {
    const [synced] = await tx
      .update(messagingWorkflows)
      // The first activation is when platform events start to start runs (run-schedule.ts).
      .set({ engineId, syncedVersion: row.version, syncedAt: at, activatedAt: sql`coalesce(${messagingWorkflows.activatedAt}, ${at.toISOString()}::timestamptz)` })
      .where(eq(messagingWorkflows.id, row.id))
      .returning();
    if (!synced) throw new ApiError("not_found", "no such workflow");
    await recordAudit(tx, d.ids, { actor, requestId: d.requestId }, at, { action: "workflow.sync", targetType: "workflow", targetId: row.id, details: { engineWorkflowId: engineId, version: row.version } });
    return synced;
  });
}
