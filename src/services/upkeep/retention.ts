import { eraseDeletedAccounts, type ErasureDeps } from "../account/erasure";
import { pruneAccountExports } from "../account/export-runner";
import { pruneImpressionCounts } from "../discovery/impressions";
import { purgeExpiredKeys } from "../idempotency/keys";
import { pruneEventOutbox } from "../matching/event-retention";
import { pruneDeliveryLog } from "../outbox/retention";
import { pruneTranslationCache } from "../translations/member-text";
import { pruneWorkflowRuns } from "../workflows/run-retention";

export interface RetentionTask {
  name: string;
  run(deps: ErasureDeps, now: number): Promise<unknown>;
}

/**
 * What the scheduled upkeep prunes and erases, hourly on both runtimes (the Workers cron's first
 * run of each hour; on Node a timer a minute after the start, then every hour): the event outbox
 * past its retention, settled partner deliveries and workflow hand-overs with their delivery
 * records after 30 days, workflow runs finished more than 90 days ago, feed impressions older than
 * yesterday, translations nobody read, exports past their download window, idempotency records
 * past 48 hours, and accounts deleted more than 30 days ago (docs/api/account.md#retention). Each
 * task is independent: one failing leaves the others to run.
 */
export const RETENTION_TASKS: readonly RetentionTask[] = [
  { name: "event outbox pruning", run: (deps, now) => pruneEventOutbox(deps.db, now, deps.logger) },
  { name: "delivery log pruning", run: (deps, now) => pruneDeliveryLog(deps.db, now, deps.logger) },
  { name: "workflow run pruning", run: (deps, now) => pruneWorkflowRuns(deps.db, now, deps.logger) },
  { name: "impression pruning", run: (deps, now) => pruneImpressionCounts(deps.db, now, deps.logger) },
  { name: "translation cache pruning", run: (deps, now) => pruneTranslationCache(deps.db, now, deps.logger) },
  { name: "account export pruning", run: (deps, now) => pruneAccountExports(deps.db, now, deps.logger) },
  { name: "idempotency key pruning", run: (deps, now) => purgeExpiredKeys(deps.db, now) },
  { name: "account erasure", run: (deps, now) => eraseDeletedAccounts(deps, now) },
];
