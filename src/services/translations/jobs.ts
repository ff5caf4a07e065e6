import { eq } from "drizzle-orm";
import { recordAudit } from "../audit/log";
import type { Principal } from "../../auth/principal";
import type { Db } from "../../db/port";
import { translationJobs, type JobLanguageProgress } from "../../db/tables/translations";
import { ApiError } from "../../errors";
import type { IdGenerator } from "../../platform/ids";
import { DEFAULT_LANGUAGE } from "../ai/languages";
import { englishBundle } from "./bundles";
import { bundleLanguage } from "./languages";

export type JobStatus = "queued" | "running" | "waiting" | "done";

export interface JobView {
  jobId: string;
  namespace: string;
  status: JobStatus;
  overwrite: boolean;
  languages: JobLanguageProgress[];
  /** Why a `waiting` job waits (the inference hosts could not be reached); null otherwise. */
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

export interface JobContext {
  db: Db;
  ids: IdGenerator;
  now: number;
  /** The request a write serves, for its audit entry. */
  requestId: string;
}

export interface SeedInput {
  targetLanguages: string[];
  overwrite: boolean;
}

type JobRow = typeof translationJobs.$inferSelect;

export function jobView(row: JobRow): JobView {
  return {
    jobId: row.id,
    namespace: row.namespace,
    status: row.status as JobStatus,
    overwrite: row.overwrite,
    languages: row.progress,
    lastError: row.lastError,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    finishedAt: row.finishedAt?.toISOString() ?? null,
  };
}

/**
 * Queues a seeding job: the namespace's missing and outdated keys in each target language, or
 * every key with `overwrite` (admins' own translations included). The job runs in the background.
 */
export async function createSeedJob(ctx: JobContext, actor: Principal, namespace: string, input: SeedInput): Promise<JobView> {
  if (actor.role !== "admin") throw new ApiError("forbidden", "only admins seed translations");
  const languages: string[] = [];
  for (const [i, value] of input.targetLanguages.entries()) {
    const tag = bundleLanguage(value);
    if (!tag) throw new ApiError("invalid_language", `'${value}' is not a supported language`, { details: [{ path: `targetLanguages.${i}`, message: "one of the 40 supported languages, optionally with a region (pt-BR)" }] });
    if (tag === DEFAULT_LANGUAGE) throw new ApiError("invalid_input", "English is the source language", { details: [{ path: `targetLanguages.${i}`, message: "not en" }] });
    if (!languages.includes(tag)) languages.push(tag);
  }
  await englishBundle(ctx.db, namespace);
  const at = new Date(ctx.now);
  const row = await ctx.db.transaction(async (tx) => {
    const [created] = await tx
      .insert(translationJobs)
      .values({
        id: ctx.ids.next("trj"),
        namespace,
        overwrite: input.overwrite,
        status: "queued",
        progress: languages.map((language) => ({ language, status: "pending", total: 0, translated: 0, untranslated: [] })),
        requestedBy: actor.userId,
        createdAt: at,
        updatedAt: at,
      })
      .returning();
    await recordAudit(tx, ctx.ids, { actor, requestId: ctx.requestId }, at, { action: "translations.seed", targetType: "translation_job", targetId: created!.id, details: { namespace, targetLanguages: languages, overwrite: input.overwrite } });
    return created!;
  });
  return jobView(row);
}

export async function getJob(db: Db, actor: Principal, jobId: string): Promise<JobView> {
  if (actor.role !== "admin") throw new ApiError("forbidden", "only admins see seeding jobs");
  const [row] = await db.select().from(translationJobs).where(eq(translationJobs.id, jobId)).limit(1);
  if (!row) throw new ApiError("not_found", "no such job");
  return jobView(row);
}
