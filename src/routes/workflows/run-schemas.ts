import { z } from "@hono/zod-openapi";
import { CHANNELS } from "../../services/workflows/graph";
import { RUN_STATUSES } from "../../services/workflows/runs";

export const RunInput = z
  .object({
    input: z.record(z.string(), z.unknown()).optional().openapi({ description: "What the run's messages and conditions read (`{{displayName}}` → `input.displayName`); at most 16 KiB as JSON" }),
  })
  .strict()
  .openapi("WorkflowRunInput");

export const RunAccepted = z.object({ runId: z.string(), status: z.literal("queued") }).openapi("WorkflowRunAccepted");

const Delivery = z.object({
  nodeId: z.string(),
  channel: z.string(),
  route: z.string(),
  status: z.enum(["sent", "delivered", "failed"]),
  latencyMs: z.number().nullable(),
  at: z.string(),
});

export const Run = z
  .object({
    runId: z.string(),
    workflowId: z.string(),
    workflowVersion: z.number().int(),
    trigger: z.string().openapi({ description: "`manual`, or the platform event that started the run" }),
    eventId: z.number().int().nullable(),
    status: z.enum(RUN_STATUSES),
    input: z.record(z.string(), z.unknown()),
    error: z.string().nullable(),
    deliveries: z.array(Delivery).openapi({ description: "Per-message outcomes the engine reported" }),
    createdBy: z.string().nullable(),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
    updatedAt: z.string(),
    deadlineAt: z.string().openapi({ description: "Without a final status by then, the run becomes `timed_out`" }),
  })
  .openapi("WorkflowRun");

export const RunList = z.object({ runs: z.array(Run), nextCursor: z.string().nullable() }).openapi("WorkflowRunList");

const isoTime = z.string().max(40).refine((v) => !Number.isNaN(Date.parse(v)), "an ISO 8601 time");

export const StatusCallback = z
  .object({
    runId: z.string().min(1).max(64),
    status: z.enum(["running", "succeeded", "failed"]),
    startedAt: isoTime.optional(),
    finishedAt: isoTime.optional(),
    error: z.string().max(1000).optional(),
    deliveries: z
      .array(
        z
          .object({
            nodeId: z.string().min(1).max(64),
            channel: z.enum(CHANNELS),
            route: z.string().min(1).max(200),
            status: z.enum(["sent", "delivered", "failed"]),
            latencyMs: z.number().int().min(0).max(86_400_000).nullable().optional(),
          })
          .strict(),
      )
      .max(200)
      .optional(),
  })
  .strict()
  .openapi("WorkflowStatusCallback");

export const StatusAnswer = Run.extend({ changed: z.boolean().openapi({ description: "false for a replay or an ignored late report" }) }).openapi("WorkflowStatusAnswer");
