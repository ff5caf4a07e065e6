import { and, eq, lt, sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { idempotencyKeys } from "../../db/schema";
import { ApiError } from "../../errors";
import type { Tx } from "../wallet/ledger";

/** Keys are kept at least this long (Stripe keeps 24 h). */
export const KEY_RETENTION_MS = 48 * 3_600_000;
/**
 * An in-flight key older than this belongs to a request that died before answering, and a retry
 * may take it over. For the wallet and subscriptions that is safe even when the first request is
 * only slow, not dead: the takeover stamps the key anew, and an effect completes the key in its
 * own transaction only while the key still carries its own stamp (completeKeyWithEffect), so the
 * slower of the two rolls back. A payment request that died may have reached its provider; the
 * payment it made keeps the key, and the retry finds it there (payments/store.ts createPending)
 * instead of asking the provider twice.
 */
export const STALE_IN_FLIGHT_MS = 5 * 60_000;

export interface IdempotencyHandle {
  userId: string;
  key: string;
  /** The stamp this request put on the key when it claimed it: whose claim it is. */
  claimedAt: Date;
  /**
   * The status an effect recorded with the key inside its own transaction (completeKeyWithEffect).
   * When the request answers with it, that transaction committed and nothing is left to record.
   */
  recordedStatus?: number;
}

export type ClaimResult = { state: "claimed"; claimedAt: Date } | { state: "replay"; status: number; body: unknown };

export async function claimKey(db: Db, input: { userId: string; key: string; fingerprint: string; now: number }): Promise<ClaimResult> {
  const now = new Date(input.now);
  const inserted = await db
    .insert(idempotencyKeys)
    .values({ userId: input.userId, key: input.key, fingerprint: input.fingerprint, status: "in_flight", createdAt: now })
    .onConflictDoNothing()
    .returning({ key: idempotencyKeys.key });
  if (inserted.length > 0) return { state: "claimed", claimedAt: now };

  const [existing] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.userId, input.userId), eq(idempotencyKeys.key, input.key)));
  if (!existing) return claimKey(db, input);
  const age = input.now - existing.createdAt.getTime();
  // Conditional on the age that allowed it, so of two requests that both saw it, one wins.
  const olderThan = (ms: number) => and(eq(idempotencyKeys.userId, input.userId), eq(idempotencyKeys.key, input.key), lt(idempotencyKeys.createdAt, new Date(input.now - ms)));
  if (age > KEY_RETENTION_MS) {
    // Past its retention the key is new again, whatever it was used for, even before the
    // sweep has removed it.
    const renewed = await db
      .update(idempotencyKeys)
      .set({ fingerprint: input.fingerprint, status: "in_flight", responseStatus: null, responseBody: null, completedAt: null, createdAt: now })
      .where(olderThan(KEY_RETENTION_MS))
      .returning({ key: idempotencyKeys.key });
    if (renewed.length > 0) return { state: "claimed", claimedAt: now };
    return claimKey(db, input);
  }
  if (existing.fingerprint !== input.fingerprint) {
    throw new ApiError("conflict", "this Idempotency-Key was used with a different request");
  }
  if (existing.status === "done") return { state: "replay", status: existing.responseStatus ?? 200, body: existing.responseBody };
  if (age > STALE_IN_FLIGHT_MS) {
    const taken = await db
      .update(idempotencyKeys)
      .set({ createdAt: now })
      .where(and(olderThan(STALE_IN_FLIGHT_MS), eq(idempotencyKeys.status, "in_flight")))
      .returning({ key: idempotencyKeys.key });
    if (taken.length > 0) return { state: "claimed", claimedAt: now };
  }
  throw new ApiError("conflict", "a request with this Idempotency-Key is still in progress");
}

/** The key as this request claimed it: in flight, with its own stamp. */
function ownClaim(handle: IdempotencyHandle) {
  return and(
    eq(idempotencyKeys.userId, handle.userId),
    eq(idempotencyKeys.key, handle.key),
    eq(idempotencyKeys.status, "in_flight"),
    eq(idempotencyKeys.createdAt, handle.claimedAt),
  );
}

async function complete(db: Db | Tx, handle: IdempotencyHandle, status: number, body: unknown, now: number): Promise<boolean> {
  const updated = await db
    .update(idempotencyKeys)
    .set({ status: "done", responseStatus: status, responseBody: body as never, completedAt: new Date(now) })
    .where(ownClaim(handle))
    .returning({ key: idempotencyKeys.key });
  return updated.length > 0;
}

/**
 * Records the answer of an effect inside the effect's own transaction. A retry that took the key
 * over while this request was still running owns it now: the error rolls this effect back, so the
 * key's effect happens once.
 */
export async function completeKeyWithEffect(tx: Tx, handle: IdempotencyHandle, status: number, body: unknown, now: number): Promise<void> {
  if (!(await complete(tx, handle, status, body, now))) {
    throw new ApiError("conflict", "a retry with this Idempotency-Key took over this request; its answer is the one kept");
  }
  handle.recordedStatus = status;
}

/**
 * Records an answer that had no effect of its own to commit with (a refusal, a provider's answer).
 * A no-op once the key is done or taken over, so it may be tried again after a lost connection.
 */
export async function completeKey(db: Db, handle: IdempotencyHandle, status: number, body: unknown, now: number): Promise<void> {
  await complete(db, handle, status, body, now);
}

/**
 * Frees a key whose request failed on our side, so the client may retry it (not a key a retry took
 * over, nor one whose effect committed): safe to try again after a lost connection.
 */
export async function releaseKey(db: Db, handle: IdempotencyHandle): Promise<void> {
  await db.delete(idempotencyKeys).where(ownClaim(handle));
}

export async function purgeExpiredKeys(db: Db, now: number): Promise<void> {
  await db.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, sql`${new Date(now - KEY_RETENTION_MS)}`));
}
