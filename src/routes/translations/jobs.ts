import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { principalOf } from "../../http/auth";
import { deferOnSession } from "../../http/defer";
import type { AppEnv } from "../../http/env";
import { createRouter, jsonBody } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { idPattern } from "../../platform/ids";
import { LANGUAGE_CODES } from "../../services/ai/languages";
import { createSeedJob, getJob } from "../../services/translations/jobs";
import { runTranslationJobs } from "../../services/translations/seeding";

/**
 * How long the run a seed request starts may go on: within what Workers grant a waitUntil after
 * the answer. What is left then is taken up by the schedule (Node) or the cron trigger (Workers).
 */
export const KICK_BUDGET_MS = 25_000;

const Progress = z.object({
  language: z.string(),
  status: z.enum(["pending", "running", "done"]),
  total: z.number().int().openapi({ description: "Keys the language's bundle has (its own plural forms)" }),
  translated: z.number().int().openapi({ description: "Keys stored and current" }),
  untranslated: z.array(z.object({ key: z.string(), reason: z.string() })).openapi({ description: "Keys the model could not translate with their placeholders intact; served in English" }),
});

const Job = z
  .object({
    jobId: z.string(),
    namespace: z.string(),
    status: z.enum(["queued", "running", "waiting", "done"]).openapi({ description: "`waiting`: the inference hosts could not be reached; the job goes on by itself" }),
    overwrite: z.boolean(),
    languages: z.array(Progress),
    lastError: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    finishedAt: z.string().nullable(),
  })
  .openapi("TranslationJob");

const SeedInput = z
  .object({
    targetLanguages: z
      .array(z.string().max(35))
      .min(1)
      .max(LANGUAGE_CODES.length)
      .openapi({ example: ["fr", "sw", "pt-BR"] }),
    overwrite: z.boolean().default(false).openapi({ description: "Translate every key again, admins' own translations included" }),
  })
  .strict()
  .openapi("TranslationSeedInput");

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

function kickJobs(c: Context<AppEnv>): void {
  const deps = c.get("deps");
  const work = runTranslationJobs({
    db: c.get("db"),
    inference: c.get("runtime").inference,
    random: deps.random,
    clock: deps.clock,
    logger: deps.logger,
    signal: deps.stopping,
    budgetMs: KICK_BUDGET_MS,
  });
  deps.background?.track(work);
  deferOnSession(c, work, "translation jobs");
}

export const jobRoutes = createRouter()
  .openapi(
    protectedRoute("admin", {
      method: "post",
      path: "/api/v1/translations/{namespace}/seed",
      tags: ["translations"],
      summary: "Queue machine translation of a namespace into languages (missing and outdated keys; all with overwrite)",
      request: { params: z.object({ namespace: z.string().min(1).max(64) }), body: jsonBody(SeedInput) },
      responses: {
        202: { ...json(Job, "Queued; follow it at the `Location` (GET /api/v1/translations/jobs/{jobId})"), headers: z.object({ Location: z.string() }) },
        400: { description: "A language is unsupported (`invalid_language`) or English" },
        404: { description: "No such namespace" },
      },
    }),
    async (c) => {
      const deps = c.var.deps;
      const job = await createSeedJob({ db: c.var.db, ids: deps.ids, now: deps.clock.now(), requestId: c.var.requestId }, principalOf(c), c.req.valid("param").namespace, c.req.valid("json"));
      kickJobs(c);
      c.header("Location", `/api/v1/translations/jobs/${job.jobId}`);
      return c.json(job, 202);
    },
  )
  .openapi(
    protectedRoute("admin", {
      method: "get",
      path: "/api/v1/translations/jobs/{jobId}",
      tags: ["translations"],
      summary: "A seeding job's progress per language, with the keys left in English",
      request: { params: z.object({ jobId: z.string().max(64).regex(idPattern("trj"), "a job id (trj_…)") }) },
      responses: { 200: json(Job, "The job"), 404: { description: "No such job" } },
    }),
    async (c) => c.json(await getJob(c.var.db, principalOf(c), c.req.valid("param").jobId), 200),
  );
