import type { AppDeps } from "../../deps";
import { createDohResolver } from "../kb/url-fetch";
import { sqlDeliveryRecords } from "../delivery-records/records";
import { deliverDue, type OutboxWorkerDeps } from "./worker";

/** The worker's ports from the app's deps (the same guard and fetch the API uses). */
export function outboxWorkerDeps(deps: AppDeps, db: OutboxWorkerDeps["db"], overrides: Partial<OutboxWorkerDeps> = {}): OutboxWorkerDeps {
  return {
    db,
    clock: deps.clock,
    random: deps.random,
    ids: deps.ids,
    logger: deps.logger,
    fetch: deps.webhookFetch ?? deps.fetch,
    resolver: deps.resolver ?? createDohResolver(deps.fetch),
    allowedHosts: deps.webhookAllowedHosts,
    production: deps.config.NODE_ENV === "production",
    records: sqlDeliveryRecords(deps.ids),
    ...overrides,
  };
}

export interface OutboxLoop {
  /**
   * Stops looking for work and resolves once the pass in flight (if any) has ended: its attempts
   * finish within `graceMs` (default 5 s); those still waiting then are cut and released, due again
   * at once for another process, without counting as an attempt.
   */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Delivers due messages until stopped: a full batch is followed at once by the next, otherwise
 * the loop waits `idleMs` before looking again. A failed pass is logged and the loop goes on.
 */
export function startOutboxLoop(d: OutboxWorkerDeps, options: { batch?: number; idleMs?: number } = {}): OutboxLoop {
  const batch = options.batch ?? 100;
  const idleMs = options.idleMs ?? 200;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wake: (() => void) | undefined;
  const cancel = new AbortController();
  const deps: OutboxWorkerDeps = { ...d, cancel: d.cancel ? AbortSignal.any([d.cancel, cancel.signal]) : cancel.signal };
  const running = (async () => {
    while (!stopped) {
      let count = 0;
      try {
        count = await deliverDue(deps, batch);
      } catch (err) {
        d.logger.error("outbox pass failed", { error: err instanceof Error ? err.message : String(err) });
      }
      if (count < batch && !stopped) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          timer = setTimeout(resolve, idleMs);
        });
      }
    }
  })();
  return {
    async stop(graceMs = 5_000) {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      wake?.();
      const grace = setTimeout(() => cancel.abort(), graceMs);
      await running;
      clearTimeout(grace);
    },
  };
}
