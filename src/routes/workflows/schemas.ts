import { z } from "@hono/zod-openapi";
import { CHANNELS, MAX_NODES, NODE_TYPES, PLACEHOLDERS, TRIGGER_EVENTS } from "../../services/workflows/graph";

// Shapes only: the graph's rules are checked by the service, which names each problem by node or edge id.
const Node = z
  .object({
    id: z.string().max(200),
    type: z.string().max(100).openapi({ description: `One of ${NODE_TYPES.join(", ")}` }),
    data: z.record(z.string(), z.unknown()).openapi({
      description:
        `trigger: {event: ${TRIGGER_EVENTS.join(" | ")}, cron? (schedule only)}; send_message: {channel: ${CHANNELS.join(" | ")}, template, subject? (email)}, ` +
        `placeholders ${PLACEHOLDERS.map((p) => `{{${p}}}`).join(", ")}; delay: {minutes}; condition: {field, op, value}`,
    }),
  })
  .strict()
  .openapi("WorkflowNode");

const Edge = z
  .object({
    id: z.string().max(200),
    source: z.string().max(200),
    target: z.string().max(200),
    label: z.string().max(20).optional().openapi({ description: "`true` or `false` on the edges out of a condition" }),
  })
  .strict()
  .openapi("WorkflowEdge");

// Generous array bounds so an oversized graph reaches the service's own size rule and its message.
export const WorkflowInput = z
  .object({
    name: z.string().trim().min(1).max(200),
    description: z.string().max(2000).optional(),
    nodes: z.array(Node).max(MAX_NODES * 10),
    edges: z.array(Edge).max(MAX_NODES * 20),
  })
  .strict()
  .openapi("WorkflowInput");

export const WorkflowSummary = z
  .object({
    workflowId: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    version: z.number().int().openapi({ description: "Counts changes of the graph" }),
    nodeCount: z.number().int(),
    engineWorkflowId: z.string().nullable().openapi({ description: "The automation engine's id, once synced" }),
    syncedVersion: z.number().int().nullable().openapi({ description: "The version the engine holds; equal to `version` when current" }),
    syncedAt: z.string().nullable(),
    createdBy: z.string(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("WorkflowSummary");

export const WorkflowList = z.object({ workflows: z.array(WorkflowSummary), nextCursor: z.string().nullable() }).openapi("WorkflowList");

export const WorkflowIdParam = z.object({ workflowId: z.string().min(1).max(64).regex(/^[A-Za-z0-9_]+$/) });

export const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50).optional(),
  cursor: z.string().max(200).optional(),
});

export const CompiledWorkflow = z
  .object({
    name: z.string(),
    nodes: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        type: z.string(),
        typeVersion: z.number(),
        position: z.array(z.number()),
        parameters: z.record(z.string(), z.unknown()),
        credentials: z.record(z.string(), z.object({ name: z.string() })).optional(),
        onError: z.literal("continueRegularOutput").optional(),
      }),
    ),
    connections: z.record(z.string(), z.object({ main: z.array(z.array(z.object({ node: z.string(), type: z.literal("main"), index: z.number().int() }))) })),
    settings: z.object({ executionOrder: z.literal("v1") }),
  })
  .openapi("CompiledWorkflow", { description: "The n8n workflow body exactly as its public API takes it (POST/PUT /api/v1/workflows)" });
