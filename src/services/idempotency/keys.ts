import { and, eq, lt, sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { idempotencyKeys } from "../../db/schema";
import { ApiError } from "../../errors";
import type { Tx } from "../wallet/ledger";

/** Keys are kept at least this long (Stripe keeps 24 h). */
export const KEY_RETENTION_MS = 48 * 3_600_000;
/**
 * An in-flight key older than this belongs to a request that died before answering, and a retry
 * may take it over. For the wallet and subscriptions that is safe: their effect completes the
 * key in its own transaction, so a key still in flight means nothing was committed. A payment
 * request that died may have reached its provider; the payment it made keeps the key, and the
 * retry finds it there (payments/store.ts createPending) instead of asking the provider twice.
 */
export const STALE_IN_FLIGHT_MS = 5 * 60_000;

export interface IdempotencyHandle {
  userId: string;
  key: string;
}

export type ClaimResult = { state: "claimed" } | { state: "replay"; status: number; body: unknown };

export async function claimKey(db: Db, input: IdempotencyHandle & { fingerprint: string; now: number }): Promise<ClaimResult> {
  const now = new Date(input.now);
  const inserted = await db
    .insert(idempotencyKeys)
    .values({ userId: input.userId, key: input.key, fingerprint: input.fingerprint, status: "in_flight", createdAt: now })
    .onConflictDoNothing()
    .returning({ key: idempotencyKeys.key });
  if (inserted.length > 0) return { state: "claimed" };

  const [existing] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.userId, input.userId), eq(idempotencyKeys.key, input.key)));
  if (!existing) return claimKey(db, input);
  if (existing.fingerprint !== input.fingerprint) {
    throw new ApiError("conflict", "this Idempotency-Key was used with a different request");
  }
  if (existing.status === "done") return { state: "replay", status: existing.responseStatus ?? 200, body: existing.responseBody };
  if (input.now - existing.createdAt.getTime() > STALE_IN_FLIGHT_MS) {
    const taken = await db
      .update(idempotencyKeys)
      .set({ createdAt: now })
      .where(and(eq(idempotencyKeys.userId, input.userId), eq(idempotencyKeys.key, input.key), eq(idempotencyKeys.status, "in_flight"), lt(idempotencyKeys.createdAt, new Date(input.now - STALE_IN_FLIGHT_MS))))
      .returning({ key: idempotencyKeys.key });
    if (taken.length > 0) return { state: "claimed" };
  }
  throw new ApiError("conflict", "a request with this Idempotency-Key is still in progress");
}

/** Records the response; called inside the transaction of the effect, or after an answer without one. */
export async function completeKey(db: Db | Tx, handle: IdempotencyHandle, status: number, body: unknown, now: number): Promise<void> {
  await db
    .update(idempotencyKeys)
    .set({ status: "done", responseStatus: status, responseBody: body as never, completedAt: new Date(now) })
    .where(and(eq(idempotencyKeys.userId, handle.userId), eq(idempotencyKeys.key, handle.key), eq(idempotencyKeys.status, "in_flight")));
}

/** Frees a key whose request failed on our side, so the client may retry it. */
export async function releaseKey(db: Db, handle: IdempotencyHandle): Promise<void> {
  await db
    .delete(idempotencyKeys)
    .where(and(eq(idempotencyKeys.userId, handle.userId), eq(idempotencyKeys.key, handle.key), eq(idempotencyKeys.status, "in_flight")));
}

export async function purgeExpiredKeys(db: Db, now: number): Promise<void> {
  await db.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, sql`${new Date(now - KEY_RETENTION_MS)}`));
}
