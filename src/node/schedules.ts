import type { Config } from "../config";
import type { Db } from "../db/port";
import type { Logger } from "../platform/logger";
import { paymentDepsOf } from "../services/payments/context";
import { reconcilePayments } from "../services/payments/reconcile";
import { pruneEventOutbox } from "../services/matching/event-retention";
import { pruneImpressionCounts } from "../services/discovery/impressions";
import type { BackgroundWork } from "../platform/background";
import { inferenceFromConfig } from "../services/inference/from-config";
import { runTranslationJobs } from "../services/translations/seeding";
import { pruneTranslationCache } from "../services/translations/member-text";
import { eraseDeletedAccounts } from "../services/account/erasure";
import { purgeExpiredKeys } from "../services/idempotency/keys";
import type { NodeDeps } from "./deps";
import { outboxWorkerDeps, startOutboxLoop } from "../services/outbox/loop";
import { runWorkflowSchedule } from "../services/workflows/run-schedule";
import { pruneAccountExports, runAccountExports } from "../services/account/export-runner";

const PRUNE_FIRST_AFTER_MS = 60_000;
const PRUNE_EVERY_MS = 3_600_000;
/** How often queued translation jobs are looked for (a seed request also starts a run at once). */
export const TRANSLATION_JOBS_EVERY_MS = 15_000;
/** How often stored platform events are turned into workflow runs, and overdue runs timed out. */
export const WORKFLOW_RUNS_EVERY_MS = 5_000;
/** How often pending account exports are looked for (a request also starts a build at once). */
export const ACCOUNT_EXPORTS_EVERY_MS = 15_000;

/**
 * The Node twin of the Workers cron triggers: payment reconciliation, the hourly pruning,
 * translation jobs and account exports. One process per deployment runs them (the single server,
 * or the primary of a worker cluster), so a run is never doubled by the workers. The outbox's
 * delivery loop runs here too (several processes could run it safely, as claims skip each other's
 * rows, but one is enough). Returns the stop, which resolves once the outbox's attempts in flight
 * are recorded or released; a translation job still running is handed back between batches, an
 * export being built is finished (the run stops between exports), and `background` settles once
 * they have. The database can be closed after both.
 */
export function startSchedules(deps: NodeDeps, config: Config, logger: Logger, background: BackgroundWork): () => Promise<void> {
  // A run still going when the next is due is not doubled; shutdown waits for the one in flight.
  const repeat = (name: string, everyMs: number, job: () => Promise<unknown>) => {
    let running = false;
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      const run = job()
        .catch((err: unknown) => logger.error(`${name} failed`, { error: err instanceof Error ? err.message : String(err) }))
        .finally(() => {
          running = false;
        });
      background.track(run);
    }, everyMs);
    timer.unref();
    return timer;
  };
  const intervalSeconds = config.PAYMENT_RECONCILE_INTERVAL_SECONDS;
  const reconcile = intervalSeconds > 0 ? repeat("payment reconciliation", intervalSeconds * 1000, () => reconcilePayments(paymentDepsOf(deps, deps.database.session().db))) : undefined;

  // The event outbox keeps EVENT_RETENTION_DAYS and feed impressions two days; older rows are
  // pruned hourly, and once soon after the start so a server that restarts often still prunes.
  // Idempotency records past their 48 hours go too, and accounts deleted more than 30 days ago
  // are erased in the same upkeep (docs/api/account.md#retention).
  const upkeep = (name: string, step: (db: Db, now: number, log: Logger) => Promise<void>) =>
    void step(deps.database.session().db, deps.clock.now(), logger).catch((err: unknown) => logger.error(`${name} failed`, { error: err instanceof Error ? err.message : String(err) }));
  const prune = () => {
    upkeep("event outbox pruning", pruneEventOutbox);
    upkeep("impression pruning", pruneImpressionCounts);
    upkeep("translation cache pruning", pruneTranslationCache);
    upkeep("account export pruning", pruneAccountExports);
    upkeep("idempotency key pruning", (db, now) => purgeExpiredKeys(db, now));
    upkeep("account erasure", (db, now, log) => eraseDeletedAccounts({ db, kv: deps.kv, ids: deps.ids, logger: log }, now).then(() => undefined));
  };
  const firstPrune = setTimeout(prune, PRUNE_FIRST_AFTER_MS);
  const pruning = setInterval(prune, PRUNE_EVERY_MS);
  firstPrune.unref();
  pruning.unref();
  const outbox = startOutboxLoop(outboxWorkerDeps(deps, deps.database.session().db));
  // Jobs left by a stopped or crashed process, and those waiting for the inference hosts, resume here.
  const stopping = new AbortController();
  const inference = deps.inference ?? inferenceFromConfig(config, deps);
  const translations = repeat("translation jobs", TRANSLATION_JOBS_EVERY_MS, () =>
    runTranslationJobs({ db: deps.database.session().db, inference, random: deps.random, clock: deps.clock, logger, signal: stopping.signal }),
  );
  // Platform events become workflow runs; overdue runs are timed out.
  const workflowRuns = repeat("workflow runs schedule", WORKFLOW_RUNS_EVERY_MS, () =>
    runWorkflowSchedule({ db: deps.database.session().db, config, ids: deps.ids, random: deps.random, now: deps.clock.now(), logger }),
  );
  // Exports whose request's own build was cut short (a restart) or failed and waits to be retried.
  const exports = repeat("account exports", ACCOUNT_EXPORTS_EVERY_MS, () =>
    runAccountExports({ db: deps.database.session().db, kv: deps.kv, clock: deps.clock, logger, signal: stopping.signal }),
  );
  return async () => {
    stopping.abort();
    clearInterval(workflowRuns);
    clearInterval(exports);
    clearInterval(translations);
    clearInterval(reconcile);
    clearInterval(pruning);
    clearTimeout(firstPrune);
    await outbox.stop();
  };
}
