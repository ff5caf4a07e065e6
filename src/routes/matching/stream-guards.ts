import type { Context } from "hono";
import type { Principal } from "../../auth/principal";
import type { Db } from "../../db/port";
import { ApiError } from "../../errors";
import { defer } from "../../http/defer";
import type { AppEnv } from "../../http/env";
import { loggedError } from "../../platform/logged-error";
import { apiKeyStillValid } from "../../services/api-keys/keys";
import { deletedMarkerKey } from "../../services/account/markers";
import { releaseStreamSlot, renewStreamSlot, STREAMS_PER_PERSON, takeStreamSlot, type SlotOutcome } from "../../services/matching/stream-slots";

// What keeps an event stream within bounds while it is open: its person's place among
// STREAMS_PER_PERSON, and the credential it was opened with.

/** setTimeout's longest delay; a later expiry is waited for in steps. */
const MAX_TIMER_MS = 2_147_483_647;

export interface CredentialWatch {
  /** Starts the clock on the credential's expiry. */
  start(): void;
  /** Called on each heartbeat with the stream's database: re-checks an API key, or a token's account. */
  heartbeat(db: Db): void;
  stop(): void;
}

/**
 * Ends a stream once the credential it was opened with stops working: at the token's `exp` (or
 * the API key's `expiresAt`), and for an API key at the first heartbeat after it was revoked or
 * its admin lost the role (revocation is "effective at once"; a stream re-checks within 20 s), and
 * at the first heartbeat after its account was deleted.
 * Authentication happens once per request, and a stream is a request that does not end: without
 * this, a revoked key or an expired token kept its feed for as long as the client stayed. The
 * client reconnects and is authenticated afresh.
 */
export function watchCredential(c: Context<AppEnv>, principal: Principal, end: () => void): CredentialWatch {
  const [deps, requestId] = [c.get("deps"), c.get("requestId")];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  let checking = false;
  const finish = (reason: string) => {
    if (stopped) return;
    watch.stop();
    deps.logger.info("event stream ended: its credential is no longer valid", { requestId, userId: principal.userId, reason });
    end();
  };
  const arm = (expiresAt: number) => {
    const left = expiresAt - deps.clock.now();
    timer = left > MAX_TIMER_MS ? setTimeout(() => arm(expiresAt), MAX_TIMER_MS) : setTimeout(() => finish("expired"), Math.max(0, left));
    unref(timer);
  };
  const watch: CredentialWatch = {
    start() {
      if (!stopped && principal.expiresAt !== undefined) arm(principal.expiresAt);
    },
    heartbeat(db) {
      const { keyId } = principal;
      if (stopped || checking) return;
      checking = true;
      // A key is checked in the database (its creator's deletion included); a token's account
      // through the store's deletion note, which every deletion writes.
      const check =
        keyId === undefined
          ? deps.kv.get(deletedMarkerKey(principal.userId)).then((note) => (note === null ? null : "account deleted"))
          : apiKeyStillValid(db, keyId, deps.clock.now()).then((valid) => (valid ? null : "api key revoked or expired"));
      check
        .then((reason) => {
          if (reason !== null) finish(reason);
        })
        // A database that cannot answer now is asked again at the next heartbeat.
        .catch((err: unknown) => deps.logger.warn("re-checking an event stream's credential failed", { requestId, userId: principal.userId, error: loggedError(err) }))
        .finally(() => {
          checking = false;
        });
    },
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
  return watch;
}

/** Lets Node exit with the timer pending (Workers timers are plain numbers). */
function unref(timer: unknown): void {
  (timer as { unref?: () => void }).unref?.();
}

/** This stream's place among its person's open streams: renewed while it lives, released once it ends. */
export interface StreamSlot {
  renew(): void;
  release(): void;
}

const NO_SLOT: StreamSlot = { renew: () => {}, release: () => {} };

/** Takes one of the person's STREAMS_PER_PERSON places, or answers 429 when all are taken. */
export async function takeSlot(c: Context<AppEnv>, userId: string): Promise<StreamSlot> {
  const [deps, requestId] = [c.get("deps"), c.get("requestId")];
  const member = deps.ids.next("sse");
  let outcome: SlotOutcome;
  try {
    outcome = await takeStreamSlot(deps.kv, userId, member, deps.clock.now());
  } catch (err) {
    // As with the rate limits: a store that cannot answer costs the cap for a moment, not the stream.
    deps.logger.error("event stream slot check failed; opening the stream", { requestId, userId, error: loggedError(err) });
    return NO_SLOT;
  }
  if (!outcome.granted) {
    throw new ApiError("rate_limit_exceeded", `too many open event streams: at most ${STREAMS_PER_PERSON} per person`, { retryAfter: outcome.retryAfter });
  }
  let renewing = false;
  let released = false;
  return {
    renew() {
      // One renewal at a time: a store slower than the heartbeat must not pile them up.
      if (renewing || released) return;
      renewing = true;
      renewStreamSlot(deps.kv, userId, member, deps.clock.now())
        .catch((err: unknown) => deps.logger.warn("event stream slot renewal failed", { requestId, userId, error: loggedError(err) }))
        .finally(() => {
          renewing = false;
        });
    },
    release() {
      if (released) return;
      released = true;
      // A lost release is healed by the lease running out.
      defer(c, releaseStreamSlot(deps.kv, userId, member), "event stream slot release");
    },
  };
}
