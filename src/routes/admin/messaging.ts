import { z } from "@hono/zod-openapi";
import { principalOf } from "../../http/auth";
import { createRouter } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { messagingObservability, WINDOWS, type Window } from "../../services/delivery-records/observability";

const Figures = {
  sent: z.number().int(),
  delivered: z.number().int(),
  failed: z.number().int(),
  deliveryRate: z.number().nullable().openapi({ description: "delivered / (delivered + failed); null when none is decided" }),
  p50LatencyMs: z.number().int().nullable(),
  p95LatencyMs: z.number().int().nullable(),
};

const ObservabilityBody = z
  .object({
    window: z.enum(Object.keys(WINDOWS) as [Window, ...Window[]]),
    from: z.string(),
    to: z.string(),
    thresholds: z.object({ okRate: z.number(), downRate: z.number(), okP95Ms: z.number() }),
    channels: z.array(z.object({ channel: z.string(), ...Figures, health: z.enum(["ok", "degraded", "down"]) })),
    routes: z.array(
      z.object({
        rank: z.number().int(),
        channel: z.string(),
        route: z.string(),
        ...Figures,
        score: z.number().openapi({ description: "Wilson lower bound (95 %) of the delivery rate; ties go to the lower p50" }),
      }),
    ),
  })
  .openapi("MessagingObservability");

export const messagingAdminRoutes = createRouter().openapi(
  protectedRoute("admin", {
    method: "get",
    path: "/api/v1/admin/messaging/observability",
    tags: ["admin"],
    summary: "Delivery figures per channel (with health) and routes ranked by success, from the delivery records",
    request: { query: z.object({ window: z.enum(Object.keys(WINDOWS) as [Window, ...Window[]]).default("24h") }) },
    responses: { 200: { description: "Figures of the window", content: { "application/json": { schema: ObservabilityBody } } } },
  }),
  async (c) => c.json(await messagingObservability(c.var.db, principalOf(c), c.req.valid("query").window, c.var.deps.clock.now()), 200),
);
