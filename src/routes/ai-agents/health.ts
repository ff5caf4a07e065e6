import { createRoute, z } from "@hono/zod-openapi";
import { createRouter } from "../../http/router";
import type { Runtime } from "../../http/env";
import type { HostHealth } from "../../services/inference";
import { AI_AGENTS_PREFIX, aiErrors } from "./shared";

/**
 * Public (decisions.md: up/down and per-dependency status only): no addresses, model names, model
 * lists or timings, which would tell anyone what runs where.
 */
const HostState = z.object({
  host: z.string().openapi({ description: "host-1, host-2… in INFERENCE_URL order (addresses are not shown)" }),
  reachable: z.boolean(),
  coolingDown: z.boolean().openapi({ description: "Failed recently: tried only after the healthy hosts" }),
  servesModel: z.boolean().openapi({ description: "The chat model is among the host's models" }),
  servesEmbedModel: z.boolean().nullable().openapi({ description: "The embedding model is among the host's models; null when none is configured" }),
});
const AiHealth = z
  .object({
    status: z.enum(["ok", "degraded", "down"]),
    hosts: z.array(HostState),
    timestamp: z.string(),
  })
  .openapi("AiHealth");

/** Ollama lists a model pulled without a tag as `<name>:latest`. */
function serves(models: string[], wanted: string): boolean {
  return models.some((m) => m === wanted || (!wanted.includes(":") && m === `${wanted}:latest`));
}

const route = createRoute({
  method: "get",
  path: `${AI_AGENTS_PREFIX}/health`,
  tags: ["ai"],
  summary: "Whether each inference host answers and serves the configured models",
  security: [],
  middleware: [aiErrors],
  responses: {
    200: { description: "At least one host answers (`degraded` when some do not)", content: { "application/json": { schema: AiHealth } } },
    // Like /health, the answer is the report itself whatever the status: a monitor reads one body.
    503: { description: "No inference host answers, or none is configured: the same report, with status `down` (neither error shape)", content: { "application/json": { schema: AiHealth } } },
  },
});

/** The route is public: probes are reused for a few seconds so it cannot be used to flood the hosts. */
export const HEALTH_CACHE_MS = 5_000;
function probe(runtime: Runtime, now: number): Promise<HostHealth[]> {
  const cached = runtime.aiHealth;
  if (cached && now - cached.at < HEALTH_CACHE_MS) return cached.report;
  // Not tied to one caller's signal: other callers share this probe.
  const report = runtime.inference.health();
  runtime.aiHealth = { at: now, report };
  return report;
}

export const aiHealthRoutes = createRouter().openapi(route, async (c) => {
  const inference = c.var.runtime.inference;
  const hosts = (await probe(c.var.runtime, c.var.deps.clock.now())).map((h, i) => ({
    host: `host-${i + 1}`,
    reachable: h.reachable,
    coolingDown: h.coolingDown,
    servesModel: serves(h.models, inference.model),
    servesEmbedModel: inference.embedModel === undefined ? null : serves(h.models, inference.embedModel),
  }));
  const up = hosts.filter((h) => h.reachable).length;
  const status = up === 0 ? ("down" as const) : up === hosts.length ? ("ok" as const) : ("degraded" as const);
  c.header("Cache-Control", "no-store");
  const body = { status, hosts, timestamp: new Date(c.var.deps.clock.now()).toISOString() };
  return status === "down" ? c.json(body, 503) : c.json(body, 200);
});
