import { createRoute, z } from "@hono/zod-openapi";
import { createRouter } from "../../http/router";
import { checkHealth } from "../../services/health/check";

const CheckState = z.enum(["ok", "down"]);
const HealthBody = z
  .object({
    status: z.enum(["ok", "degraded", "unavailable"]),
    version: z.string(),
    checks: z.object({ database: CheckState, store: CheckState }),
  })
  .openapi("Health");
const UnavailableBody = HealthBody.extend({
  error: z.literal("service_unavailable"),
  message: z.string(),
  code: z.literal(503),
  requestId: z.string(),
}).openapi("HealthUnavailable");

const route = createRoute({
  method: "get",
  path: "/health",
  tags: ["meta"],
  summary: "Liveness and readiness: database and store checks",
  security: [],
  responses: {
    200: { description: "Serving (status `degraded` when only the store is down)", content: { "application/json": { schema: HealthBody } } },
    503: { description: "The database is unreachable", content: { "application/json": { schema: UnavailableBody } } },
  },
});

export const healthRoutes = createRouter().openapi(route, async (c) => {
  const { kv, config } = c.var.deps;
  const report = await checkHealth(c.var.db, kv, config.APP_VERSION);
  c.header("Cache-Control", "no-store");
  if (report.status === "unavailable") {
    return c.json(
      { ...report, error: "service_unavailable" as const, message: "database unreachable", code: 503 as const, requestId: c.var.requestId },
      503,
    );
  }
  return c.json(report, 200);
});
