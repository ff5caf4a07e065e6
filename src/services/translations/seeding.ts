import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import { translationJobs, translationStrings, type JobLanguageProgress } from "../../db/tables/translations";
import type { Clock } from "../../platform/clock";
import type { Random } from "../../platform/ids";
import type { Logger } from "../../platform/logger";
import { createFence, InferenceError, type ChatMessage, type InferenceClient } from "../inference";
import { englishBundle, sourceHash } from "./bundles";
import { expectedKeys, tokenProblem, type ExpectedKey } from "./i18next";
import { tagName } from "./languages";

export interface SeedingDeps {
  db: Db;
  inference: InferenceClient;
  random: Random;
  clock: Clock;
  logger: Logger;
  /** Stops the run between batches (and aborts the model call in flight): the process is stopping. */
  signal?: AbortSignal;
  /** How long one run may take before it hands its job back; a later run goes on with it. */
  budgetMs?: number;
}

/** Keys per model call: enough context for a consistent voice, small enough for a 7B model's answer. */
export const BATCH_SIZE = 20;
/** A job's holder renews its lease after every batch; a holder that vanished frees it after this. */
export const LEASE_MS = 5 * 60_000;
/** A job whose inference hosts were down is tried again after this. */
export const RETRY_AFTER_MS = 60_000;

type JobRow = typeof translationJobs.$inferSelect;

/**
 * Runs queued seeding jobs one after another until none is left, the budget is spent or the
 * signal fires. Safe to call from several processes at once: a job is claimed with a lease
 * (SKIP LOCKED), and everything it has translated is stored batch by batch, so a job that is
 * handed back or whose holder died goes on from where it stopped. Returns the jobs it finished.
 */
export async function runTranslationJobs(deps: SeedingDeps): Promise<number> {
  const started = deps.clock.now();
  let finished = 0;
  while (!deps.signal?.aborted && (deps.budgetMs === undefined || deps.clock.now() - started < deps.budgetMs)) {
    const job = await claim(deps);
    if (!job) break;
    if (await runJob(deps, job, started)) finished++;
  }
  return finished;
}

async function claim(deps: SeedingDeps): Promise<JobRow | undefined> {
  const now = deps.clock.now();
  const [claimed] = await queryRows<{ id: string }>(
    deps.db,
    sql`update translation_jobs set status = 'running', lease_until = ${new Date(now + LEASE_MS)}, updated_at = ${new Date(now)}
        where id = (select id from translation_jobs
                    where status <> 'done' and (lease_until is null or lease_until < ${new Date(now)})
                    order by created_at limit 1 for update skip locked)
        returning id`,
  );
  if (!claimed) return undefined;
  const [row] = await deps.db.select().from(translationJobs).where(eq(translationJobs.id, claimed.id));
  return row;
}

/** Writes the job's progress and renews its lease, or sets where it stands when it stops. */
async function save(deps: SeedingDeps, job: JobRow, change: Partial<Pick<JobRow, "status" | "lastError" | "leaseUntil" | "finishedAt">> = {}): Promise<void> {
  const now = deps.clock.now();
  await deps.db
    .update(translationJobs)
    .set({ progress: job.progress, updatedAt: new Date(now), leaseUntil: new Date(now + LEASE_MS), ...change })
    .where(eq(translationJobs.id, job.id));
}

class OutOfTime extends Error {}

/** True when the job is done; false when it was handed back (stopping, out of time, hosts down). */
async function runJob(deps: SeedingDeps, job: JobRow, started: number): Promise<boolean> {
  try {
    let english;
    try {
      english = await englishBundle(deps.db, job.namespace);
    } catch {
      english = {};
    }
    for (const progress of job.progress) {
      if (progress.status === "done") continue;
      progress.status = "running";
      await translateLanguage(deps, job, progress, english, started);
      progress.status = "done";
      await save(deps, job);
    }
    await save(deps, job, { status: "done", lastError: null, leaseUntil: null, finishedAt: new Date(deps.clock.now()) });
    return true;
  } catch (err) {
    const now = deps.clock.now();
    if (deps.signal?.aborted || err instanceof OutOfTime || (err instanceof InferenceError && err.reason === "aborted")) {
      // Handed back at once: the next run (after a restart, or the schedule) takes it up.
      await save(deps, job, { status: "queued", leaseUntil: null });
    } else if (err instanceof InferenceError && err.reason === "unavailable") {
      deps.logger.warn("translation job waits for the inference hosts", { jobId: job.id, error: err.message });
      await save(deps, job, { status: "waiting", lastError: "the inference hosts could not be reached; the job goes on when they answer", leaseUntil: new Date(now + RETRY_AFTER_MS) });
    } else {
      deps.logger.error("translation job failed", { jobId: job.id, error: err instanceof Error ? err.message : String(err) });
      await save(deps, job, { status: "waiting", lastError: "the job failed and is tried again shortly", leaseUntil: new Date(now + RETRY_AFTER_MS) });
    }
    return false;
  }
}

async function translateLanguage(deps: SeedingDeps, job: JobRow, progress: JobLanguageProgress, english: Record<string, string>, started: number): Promise<void> {
  const language = progress.language;
  const expected = expectedKeys(english, language);
  const hashes = new Map(await Promise.all(expected.map(async (e) => [e.key, await sourceHash(e.sourceText)] as const)));
  const stored = new Map(
    (
      await deps.db
        .select({ key: translationStrings.key, sourceHash: translationStrings.sourceHash, updatedAt: translationStrings.updatedAt })
        .from(translationStrings)
        .where(and(eq(translationStrings.namespace, job.namespace), eq(translationStrings.language, language)))
    ).map((r) => [r.key, r]),
  );
  const failed = new Set(progress.untranslated.map((u) => u.key));
  // Current: stored from today's English text, and (with overwrite) written since the job began.
  const current = (e: ExpectedKey) => {
    const row = stored.get(e.key);
    return row !== undefined && row.sourceHash === hashes.get(e.key) && (!job.overwrite || row.updatedAt >= job.createdAt);
  };
  const todo = expected.filter((e) => !current(e) && !failed.has(e.key));
  progress.total = expected.length;
  progress.translated = expected.filter(current).length;

  for (let i = 0; i < todo.length; i += BATCH_SIZE) {
    if (deps.signal?.aborted) throw new InferenceError("aborted", "stopping");
    if (deps.budgetMs !== undefined && deps.clock.now() - started >= deps.budgetMs) throw new OutOfTime();
    const batch = todo.slice(i, i + BATCH_SIZE);
    const { translated, untranslated } = await translateBatch(deps, language, batch);
    const at = new Date(deps.clock.now());
    if (translated.size > 0) {
      await deps.db
        .insert(translationStrings)
        .values([...translated].map(([key, value]) => ({ namespace: job.namespace, language, key, value, sourceHash: hashes.get(key)!, origin: "machine", updatedAt: at })))
        .onConflictDoUpdate({
          target: [translationStrings.namespace, translationStrings.language, translationStrings.key],
          set: { value: sql`excluded.value`, sourceHash: sql`excluded.source_hash`, origin: sql`excluded.origin`, updatedAt: sql`excluded.updated_at` },
        });
    }
    progress.translated += translated.size;
    progress.untranslated.push(...untranslated);
    await save(deps, job);
  }
}

export interface BatchResult {
  translated: Map<string, string>;
  untranslated: { key: string; reason: string }[];
}

/**
 * One batch: the model answers an object of exactly the batch's keys (its JSON schema says so).
 * A key whose answer lost a placeholder, tag or `$t()` (or is empty) is asked again once, alone
 * with the other bad ones and told what went missing; if it is still wrong it stays English.
 */
export async function translateBatch(deps: SeedingDeps, language: string, batch: ExpectedKey[]): Promise<BatchResult> {
  const translated = new Map<string, string>();
  let pending = batch;
  let problems = new Map<string, string>();
  for (let attempt = 0; attempt < 2 && pending.length > 0; attempt++) {
    let answer: Record<string, string>;
    try {
      answer = await askModel(deps, language, pending, attempt === 0 ? undefined : problems);
    } catch (err) {
      // The answer did not fit the batch's schema even when asked again: these keys stay English.
      if (!(err instanceof InferenceError && err.reason === "invalid_answer")) throw err;
      return { translated, untranslated: pending.map((e) => ({ key: e.key, reason: "the model's answer did not match the keys asked for" })) };
    }
    problems = new Map();
    for (const e of pending) {
      const text = answer[e.key] ?? "";
      const problem = text.trim() === "" ? "empty" : tokenProblem(e, text);
      if (problem) problems.set(e.key, problem);
      else translated.set(e.key, text);
    }
    pending = pending.filter((e) => problems.has(e.key));
  }
  return { translated, untranslated: pending.map((e) => ({ key: e.key, reason: problems.get(e.key)! })) };
}

async function askModel(deps: SeedingDeps, language: string, batch: ExpectedKey[], problems?: Map<string, string>): Promise<Record<string, string>> {
  const fence = createFence(deps.random);
  const name = tagName(language);
  const system = [
    `You translate the user interface of a dating and social app from English into ${name} (language code "${language}").`,
    "Write natural, friendly, concise interface text as a native speaker would. Keep the app name and brand names as they are.",
    "Copy every placeholder exactly, untranslated: {{name}} interpolations, $t(...) references and tags such as <1>, </1> or <br/>. " +
      "Keys ending in _zero, _one, _two, _few, _many or _other are the plural forms of that CLDR category in the target language; " +
      "write the form a native speaker uses for that category (it may leave out {{count}}).",
    fence.rules,
  ].join("\n\n");
  const source = Object.fromEntries(batch.map((e) => [e.key, e.source]));
  const notes = batch.filter((e) => e.plural).map((e) => `${e.key}: the '${e.plural!.category}' plural form`);
  const user = [
    fence.block("source_strings", JSON.stringify(source, null, 1)),
    ...(notes.length ? [fence.block("plural_forms", notes.join("\n"))] : []),
    ...(problems ? [`Your previous answer for these keys lost placeholders: ${[...problems].map(([k, p]) => `${k} (${p})`).join("; ")}. Translate them again keeping every placeholder.`] : []),
    `Answer with one JSON object with exactly these keys, each the ${name} text: ${batch.map((e) => e.key).join(", ")}.`,
  ].join("\n\n");
  const schema = z.object(Object.fromEntries(batch.map((e) => [e.key, z.string()]))).strict();
  const messages: ChatMessage[] = [
    { role: "system", content: system },
    { role: "user", content: user },
  ];
  const result = await deps.inference.generate({ messages, schema, signal: deps.signal, temperature: 0.2 });
  return result.value as Record<string, string>;
}
