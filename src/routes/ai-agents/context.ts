import { z } from "@hono/zod-openapi";
import { principalOf } from "../../http/auth";
import { createRouter } from "../../http/router";
import { contextStats, invalidateContext } from "../../services/ai/context-cache";
import { AI_AGENTS_PREFIX, aiRoute, contextDepsOf, envelope, envelopeSchema, json } from "./shared";

const Stats = z
  .object({
    entries: z.number().int().openapi({ description: "Users whose context is cached now" }),
    hits: z.number().int(),
    misses: z.number().int(),
    hitRate: z.number(),
    invalidations: z.number().int(),
    ttlSeconds: z.number().int(),
  })
  .openapi("AiContextStats");
const Invalidated = z.object({ userId: z.string(), invalidated: z.boolean().openapi({ description: "False when nothing was cached" }) }).openapi("AiContextInvalidated");
const Params = z.object({ userId: z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, "a user id") });

export const contextRoutes = createRouter()
  .openapi(
    aiRoute("admin", {
      method: "get",
      path: `${AI_AGENTS_PREFIX}/context/stats`,
      tags: ["ai"],
      summary: "Per-user AI context cache figures (admin)",
      responses: { 200: json(envelopeSchema("AiContextStatsEnvelope", Stats), "Entries, hits and misses") },
    }),
    async (c) => envelope(c, await contextStats(contextDepsOf(c), principalOf(c))),
  )
  .openapi(
    aiRoute("admin", {
      method: "post",
      path: `${AI_AGENTS_PREFIX}/context/invalidate/{userId}`,
      tags: ["ai"],
      summary: "Drop one user's cached AI context (admin)",
      request: { params: Params },
      responses: { 200: json(envelopeSchema("AiContextInvalidatedEnvelope", Invalidated), "Dropped (or nothing was cached)") },
    }),
    async (c) => {
      const { userId } = c.req.valid("param");
      return envelope(c, { userId, invalidated: await invalidateContext(contextDepsOf(c), principalOf(c), userId) });
    },
  );
