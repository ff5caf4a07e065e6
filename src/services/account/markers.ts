import type { KeyValueStore } from "../../kv/port";
import type { Logger } from "../../platform/logger";
import { ApiError } from "../../errors";
import { GRACE_MS } from "./grace";

/**
 * The store's note that an account is deleted, read by the rate limiter's script on every request
 * (services/rate-limit/script.ts), so that every instance refuses the member at once and not only
 * once its identity cache has read the database again. The database stays the authority: a marker
 * lost with the store leaves the bound of that cache (IDENTITY_FRESH_MS + IDENTITY_STALE_MS).
 */
export const deletedMarkerKey = (userId: string) => `account:deleted:${userId}`;

/** Kept a day past the grace period: the erasure removes it with the member. */
const MARKER_TTL_MS = GRACE_MS + 86_400_000;

export async function markDeleted(kv: KeyValueStore, logger: Logger, userId: string, deletedAt: number): Promise<void> {
  await kv.set(deletedMarkerKey(userId), String(deletedAt), { ttlMs: MARKER_TTL_MS }).catch((err: unknown) => {
    logger.warn("account deletion marker not stored; other instances refuse the member once their identity cache renews", { userId, error: String(err) });
  });
}

/**
 * Removed before the restore is written: a marker left behind would refuse the restored member
 * on every instance, so a store that cannot remove it fails the restore (503, retry) before
 * anything changed.
 */
export async function unmarkDeleted(kv: KeyValueStore, logger: Logger, userId: string): Promise<void> {
  try {
    await kv.del(deletedMarkerKey(userId));
  } catch (err) {
    logger.error("account deletion marker not removed; restore refused", { userId, error: String(err) });
    throw new ApiError("service_unavailable", "the account cannot be restored right now; retry shortly", { cause: err });
  }
}
