import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import { accountExports } from "../../db/tables/account";
import type { KeyValueStore } from "../../kv/port";
import type { Clock } from "../../platform/clock";
import type { Logger } from "../../platform/logger";
import { buildExportDocument } from "./export-document";
import { DOWNLOAD_WINDOW_MS } from "./exports";

export interface ExportRunnerDeps {
  db: Db;
  kv: KeyValueStore;
  clock: Clock;
  logger: Logger;
  /** Stops the run between exports: the process is stopping. */
  signal?: AbortSignal;
  /** How long one run may go on before it leaves the rest to the next. */
  budgetMs?: number;
  pageSize?: number;
  onPage?: (section: string, rows: number) => void;
}

/** A builder that vanished frees its export after this; no single build comes near it. */
export const LEASE_MS = 10 * 60_000;
/** A failed build is tried again after this, up to MAX_ATTEMPTS builds in all. */
export const RETRY_AFTER_MS = 60_000;
export const MAX_ATTEMPTS = 3;
/** Export rows (not documents: those go once downloaded or expired) are kept this long. */
export const KEEP_ROWS_MS = 30 * 86_400_000;

interface Claimed extends Record<string, unknown> {
  id: string;
  user_id: string;
  attempts: number;
}

/**
 * Builds pending exports one after another until none is left, the budget is spent or the signal
 * fires. Safe from several processes at once: an export is claimed with a lease (SKIP LOCKED), and
 * one whose builder died is claimed again once the lease has run out. Returns the exports it made ready.
 */
export async function runAccountExports(deps: ExportRunnerDeps): Promise<number> {
  const started = deps.clock.now();
  let ready = 0;
  while (!deps.signal?.aborted && (deps.budgetMs === undefined || deps.clock.now() - started < deps.budgetMs)) {
    const job = await claim(deps);
    if (!job) break;
    if (await build(deps, job)) ready++;
  }
  return ready;
}

async function claim(deps: ExportRunnerDeps): Promise<Claimed | undefined> {
  const now = deps.clock.now();
  const [claimed] = await queryRows<Claimed>(
    deps.db,
    sql`update account_exports set status = 'running', attempts = attempts + 1, lease_until = ${new Date(now + LEASE_MS).toISOString()}::timestamptz,
               started_at = coalesce(started_at, ${new Date(now).toISOString()}::timestamptz)
        where id = (select id from account_exports
                    where status in ('pending', 'running') and (lease_until is null or lease_until < ${new Date(now).toISOString()}::timestamptz)
                    order by created_at limit 1 for update skip locked)
        returning id, user_id, attempts`,
  );
  return claimed;
}

async function build(deps: ExportRunnerDeps, job: Claimed): Promise<boolean> {
  try {
    const document = await buildExportDocument(deps, { exportId: job.id, userId: job.user_id, generatedAt: new Date(deps.clock.now()) });
    const now = deps.clock.now();
    await deps.db
      .update(accountExports)
      .set({ status: "ready", document, byteSize: new TextEncoder().encode(document).length, readyAt: new Date(now), expiresAt: new Date(now + DOWNLOAD_WINDOW_MS), leaseUntil: null, lastError: null })
      .where(and(eq(accountExports.id, job.id), eq(accountExports.status, "running")));
    deps.logger.info("account export ready", { exportId: job.id, bytes: document.length });
    return true;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const final = Number(job.attempts) >= MAX_ATTEMPTS;
    deps.logger.error("account export failed", { exportId: job.id, attempt: job.attempts, final, error: message });
    await deps.db
      .update(accountExports)
      .set(final ? { status: "failed", leaseUntil: null, lastError: message } : { status: "pending", leaseUntil: new Date(deps.clock.now() + RETRY_AFTER_MS), lastError: message })
      .where(eq(accountExports.id, job.id));
    return false;
  }
}

/**
 * The hourly upkeep: documents past their download window are dropped (the export shows
 * `expired`), and rows older than KEEP_ROWS_MS go.
 */
export async function pruneAccountExports(db: Db, now: number, logger: Pick<Logger, "info">): Promise<void> {
  const at = new Date(now).toISOString();
  const expired = await queryRows(
    db,
    sql`update account_exports set status = 'expired', document = null, token_hash = null
        where status = 'ready' and expires_at <= ${at}::timestamptz returning id`,
  );
  const gone = await queryRows(db, sql`delete from account_exports where created_at < ${new Date(now - KEEP_ROWS_MS).toISOString()}::timestamptz returning id`);
  if (expired.length || gone.length) logger.info("account exports pruned", { expired: expired.length, deleted: gone.length });
}
