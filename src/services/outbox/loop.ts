import type { AppDeps } from "../../deps";
import { createDohResolver } from "../kb/url-fetch";
import { sqlDeliveryRecords } from "../delivery-records/records";
import { recordOutcomes } from "./outcomes";
import { sendWebhook, type Attempt } from "./send";
import { claimDue, partnersOf, type ClaimedMessage, type OutboxWorkerDeps } from "./worker";

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
    engine: { webhookUrl: deps.config.N8N_WEBHOOK_URL ?? (deps.config.N8N_URL ? `${deps.config.N8N_URL.replace(/\/+$/, "")}/webhook` : undefined), fetch: deps.fetch },
    ...overrides,
  };
}

export interface OutboxLoop {
  /**
   * Stops looking for work and resolves once every attempt in flight has ended and its outcome is
   * written: attempts finish within `graceMs` (default 5 s); those still waiting then are cut and
   * released, due again at once for another process, without counting as an attempt.
   */
  stop(graceMs?: number): Promise<void>;
}

export interface OutboxLoopOptions {
  /** Rows claimed at most per claim. */
  batch?: number;
  /** The wait before looking again when a claim found less than it asked for. */
  idleMs?: number;
  /** Claimed rows held at most (sending, or sent with the outcome not yet written); a claim asks only for the room left. */
  maxInFlight?: number;
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Delivers due messages until stopped, as a pipeline rather than in lockstep batches: a claim
 * asks for as many rows as there is room in flight, each send runs on its own, and outcomes are
 * written together by one writer that takes whatever has finished since its last write. A slow
 * endpoint (up to the 15 s timeout) then holds up only its own messages, and the database sees a
 * few statements per write whatever the rate. A claim that filled its ask is followed at once by
 * the next; otherwise the loop looks again after `idleMs`, or as soon as room frees up when it was
 * full. A failed claim or write is logged and the loop goes on: rows whose outcome was not written
 * come due again when their lease ends.
 */
export function startOutboxLoop(d: OutboxWorkerDeps, options: OutboxLoopOptions = {}): OutboxLoop {
  const batch = options.batch ?? 100;
  const idleMs = options.idleMs ?? 200;
  const maxInFlight = options.maxInFlight ?? 500;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wake: (() => void) | undefined;
  const cancel = new AbortController();
  const deps: OutboxWorkerDeps = { ...d, cancel: d.cancel ? AbortSignal.any([d.cancel, cancel.signal]) : cancel.signal };
  const sends = new Set<Promise<void>>();
  const finished: { msg: ClaimedMessage; attempt: Attempt }[] = [];
  let writing: Promise<void> | undefined;
  /** Claimed rows whose outcome is not written yet: what a kill would send again. */
  let held = 0;
  /** Set while the loop waits for room; only then does a freed row wake it. */
  let full = false;
  const release = (count: number) => {
    held -= count;
    if (full) wake?.();
  };

  const write = () => {
    if (writing || finished.length === 0) return;
    const items = finished.splice(0);
    writing = recordOutcomes(deps, items)
      .then(
        () => undefined,
        (err: unknown) => d.logger.error("outbox outcomes not written", { count: items.length, error: errorText(err) }),
      )
      .finally(() => {
        writing = undefined;
        release(items.length);
        write();
      });
  };

  const launch = (msg: ClaimedMessage, row: Parameters<typeof sendWebhook>[2]) => {
    const send = (async () => {
      if (msg.channel !== "webhook") {
        d.logger.error("outbox message of a channel without a sender", { messageId: msg.id, channel: msg.channel });
        return release(1);
      }
      try {
        finished.push({ msg, attempt: await sendWebhook(deps, msg, row) });
        write();
      } catch (err) {
        d.logger.error("outbox delivery failed", { messageId: msg.id, error: errorText(err) });
        release(1);
      }
    })().finally(() => sends.delete(send));
    sends.add(send);
  };

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, ms);
    }).finally(() => {
      wake = undefined;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    });

  const running = (async () => {
    while (!stopped) {
      const room = Math.min(batch, maxInFlight - held);
      let claimed = 0;
      if (room > 0) {
        try {
          const rows = await claimDue(deps, room);
          claimed = rows.length;
          held += claimed;
          // Rows claimed but never sent are left to their lease.
          const partners = await partnersOf(deps, rows).catch((err: unknown) => {
            release(claimed);
            throw err;
          });
          for (const msg of rows) launch(msg, partners.get(msg.target_id));
        } catch (err) {
          d.logger.error("outbox pass failed", { error: errorText(err) });
        }
      }
      // Full: a finishing send wakes the loop. Idle: it looks again after idleMs.
      full = room <= 0;
      if ((full || claimed < room) && !stopped) await pause(idleMs);
      full = false;
    }
    while (sends.size > 0) await Promise.all([...sends]);
    while (writing || finished.length > 0) {
      write();
      await writing;
    }
  })();

  return {
    async stop(graceMs = 5_000) {
      stopped = true;
      wake?.();
      const grace = setTimeout(() => cancel.abort(), graceMs);
      await running;
      clearTimeout(grace);
    },
  };
}
