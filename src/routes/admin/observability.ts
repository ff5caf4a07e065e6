import { createRoute, z } from "@hono/zod-openapi";
import { principalOf } from "../../http/auth";
import { observabilityToken } from "../../http/observability-guard";
import { createRouter, jsonBody } from "../../http/router";
import { ErrorBody, protectedRoute } from "../../http/routes";
import { bugsinkRollup } from "../../services/observability/bugsink";
import { latestHeartbeats, recordHeartbeat } from "../../services/observability/heartbeats";

const Telemetry = z
  .object({
    hostname: z.string().max(255).optional(),
    cpuPercent: z.number().min(0).max(100).optional(),
    memoryPercent: z.number().min(0).max(100).optional(),
    diskPercent: z.number().min(0).max(100).optional(),
    gpuPercent: z.number().min(0).max(100).optional(),
    load1: z.number().min(0).optional(),
  })
  .catchall(z.union([z.string().max(1000), z.number(), z.boolean(), z.null()]))
  .openapi("VmTelemetry");

const BugsinkBody = z
  .union([
    z.object({ configured: z.literal(false) }),
    z.object({
      configured: z.literal(true),
      status: z.enum(["ok", "unavailable"]).openapi({ description: "unavailable: the tracker is down, slow or answered nonsense; the figures are the last ones read" }),
      fetchedAt: z.string().nullable().openapi({ description: "When the figures were read from the tracker; null when never" }),
      projects: z.array(
        z.object({
          id: z.string(),
          name: z.string(),
          unresolved: z.number().int(),
          unresolvedUnmuted: z.number().int(),
          truncated: z.boolean(),
          samples: z.array(z.object({ id: z.string(), title: z.string(), firstSeen: z.string(), lastSeen: z.string(), eventCount: z.number().int() })),
        }),
      ),
    }),
  ])
  .openapi("BugsinkRollup");

const VmIdParam = z.object({ vmId: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "1–64 of A-Z a-z 0-9 . _ -") });
const err = (description: string) => ({ description, content: { "application/json": { schema: ErrorBody } } });

export const observabilityRoutes = createRouter()
  .openapi(
    createRoute({
      method: "post",
      path: "/api/v1/admin/observability/vms/{vmId}/heartbeat",
      tags: ["admin"],
      summary: "VM agent heartbeat (header X-Observability-Token)",
      security: [{ observabilityToken: [] }],
      middleware: [observabilityToken],
      request: { params: VmIdParam, body: jsonBody(Telemetry) },
      responses: {
        202: { description: "Recorded", content: { "application/json": { schema: z.object({ vmId: z.string(), receivedAt: z.string() }) } } },
        400: err("Invalid telemetry"),
        401: err("Missing or wrong X-Observability-Token"),
        503: err("The observability token is not configured"),
      },
    }),
    async (c) => {
      const { vmId } = c.req.valid("param");
      const now = c.var.deps.clock.now();
      await recordHeartbeat(c.var.db, vmId, c.req.valid("json"), now);
      return c.json({ vmId, receivedAt: new Date(now).toISOString() }, 202);
    },
  )
  .openapi(
    protectedRoute("admin", {
      method: "get",
      path: "/api/v1/admin/observability/vms",
      tags: ["admin"],
      summary: "Latest VM capacity telemetry",
      responses: {
        200: {
          description: "One entry per VM, newest first",
          content: {
            "application/json": {
              schema: z.object({ vms: z.array(z.object({ vmId: z.string(), receivedAt: z.string(), stale: z.boolean(), telemetry: Telemetry })) }),
            },
          },
        },
      },
    }),
    async (c) => c.json({ vms: (await latestHeartbeats(c.var.db, principalOf(c), c.var.deps.clock.now())) as never }, 200),
  )
  .openapi(
    protectedRoute("admin", {
      method: "get",
      path: "/api/v1/admin/observability/bugsink",
      tags: ["admin"],
      summary: "Error-tracker (Bugsink) rollup per project: open issue counts and the newest samples; cached 60 s",
      responses: { 200: { description: "The rollup, or configured: false", content: { "application/json": { schema: BugsinkBody } } } },
    }),
    async (c) => {
      const { config, kv, logger, clock } = c.var.deps;
      const rollup = await bugsinkRollup(
        { url: config.BUGSINK_URL, token: config.BUGSINK_API_TOKEN, timeoutMs: config.BUGSINK_TIMEOUT_MS, kv, fetch: c.var.deps.fetch, now: () => clock.now(), logger },
        principalOf(c),
      );
      return c.json(rollup as never, 200);
    },
  );
