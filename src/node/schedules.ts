import type { Config } from "../config";
import type { Logger } from "../platform/logger";
import { paymentDepsOf } from "../services/payments/context";
import { reconcilePayments } from "../services/payments/reconcile";
import type { BackgroundWork } from "../platform/background";
import { inferenceFromConfig } from "../services/inference/from-config";
import { runTranslationJobs } from "../services/translations/seeding";
import type { NodeDeps } from "./deps";
import { outboxWorkerDeps, startOutboxLoop } from "../services/outbox/loop";
import { runWorkflowSchedule } from "../services/workflows/run-schedule";
import { runAccountExports } from "../services/account/export-runner";
import { RETENTION_TASKS } from "../services/upkeep/retention";

const PRUNE_FIRST_AFTER_MS = 60_000;
const PRUNE_EVERY_MS = 3_600_000;
/** How often queued translation jobs are looked for (a seed request also starts a run at once). */
export const TRANSLATION_JOBS_EVERY_MS = 15_000;
/** How often stored platform events are turned into workflow runs, and overdue runs timed out. */
export const WORKFLOW_RUNS_EVERY_MS = 5_000;
/** How often pending account exports are looked for (a request also starts a build at once). */
export const ACCOUNT_EXPORTS_EVERY_MS = 15_000;

/**
 * The Node twin of the Workers cron triggers: payment reconciliation, the hourly retention tasks,
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

  // The retention tasks (RETENTION_TASKS) run hourly, and once soon after the start so that a
  // server that restarts often still prunes; each on its own, so one failing stops no other.
  const prune = () => {
    const db = deps.database.session().db;
    for (const { name, run } of RETENTION_TASKS) {
      void run({ db, kv: deps.kv, ids: deps.ids, logger }, deps.clock.now()).catch((err: unknown) =>
        logger.error(`${name} failed`, { error: err instanceof Error ? err.message : String(err) }),
      );
    }
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
