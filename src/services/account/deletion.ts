import { sql } from "drizzle-orm";
import type { Principal } from "../../auth/principal";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import { ApiError } from "../../errors";
import type { KeyValueStore } from "../../kv/port";
import type { Logger } from "../../platform/logger";
import { GRACE_DAYS, GRACE_MS } from "./grace";
import { markDeleted, unmarkDeleted } from "./markers";
import type { AccountStates } from "./states";

export interface AccountContext {
  db: Db;
  kv: KeyValueStore;
  logger: Logger;
  now: number;
  accounts: AccountStates;
}

export interface DeletedAccount {
  status: "deleted";
  deletedAt: string;
  /** Until then POST /api/v1/account/restore undoes the deletion; afterwards the account is erased. */
  restorableUntil: string;
}

/**
 * Deleting and restoring an account is for the person, signed in: an API key (which acts as an
 * admin for automation) cannot do either, so a leaked key cannot remove its owner.
 */
function assertSignedIn(actor: Principal, what: string): void {
  if (actor.credential !== "token") throw new ApiError("forbidden", `an API key cannot ${what} an account; sign in`);
}

/**
 * Deletes the caller's account at once: one statement marks the user row and hides a visible
 * profile (so discovery drops them through its own visibility filter), and from its commit every
 * rule that shows people (safety/visibility.ts) treats them as an unknown id. Their data stays
 * until the grace period ends, so a restore brings everything back.
 */
export async function deleteAccount(ctx: AccountContext, actor: Principal, input: { confirm: "DELETE" }): Promise<DeletedAccount> {
  assertSignedIn(actor, "delete");
  if (input.confirm !== "DELETE") throw new ApiError("invalid_input", 'confirm must be "DELETE"', { details: [{ path: "confirm", message: 'must be "DELETE"' }] });
  const at = new Date(ctx.now);
  const [row] = await queryRows<{ deleted_at: Date | string }>(
    ctx.db,
    sql`with hid as (
          update profiles set visibility = 'hidden' where user_id = ${actor.userId} and visibility = 'visible' returning user_id)
        update users set deleted_at = ${at.toISOString()}::timestamptz, profile_hidden_by_deletion = exists (select 1 from hid)
        where id = ${actor.userId} and deleted_at is null
        returning deleted_at`,
  );
  // Only a request that began before another one deleted the account gets here without a row.
  if (!row) throw new ApiError("account_deleted");
  ctx.accounts.record(actor.userId, ctx.now, ctx.now);
  await markDeleted(ctx.kv, ctx.logger, actor.userId, ctx.now);
  return { status: "deleted", deletedAt: at.toISOString(), restorableUntil: new Date(ctx.now + GRACE_MS).toISOString() };
}

/**
 * Undoes a deletion within the grace period: the account and a profile the deletion hid are
 * shown again, exactly as they were. An account that is not deleted → 409; one past its grace
 * period (waiting for the hourly erasure) stays deleted, and its marker is set again.
 */
export async function restoreAccount(ctx: AccountContext, actor: Principal): Promise<{ status: "active"; restoredAt: string }> {
  assertSignedIn(actor, "restore");
  const cutoff = new Date(ctx.now - GRACE_MS).toISOString();
  await unmarkDeleted(ctx.kv, ctx.logger, actor.userId);
  const rows = await queryRows<{ restored: boolean; deleted_at: Date | string | null }>(
    ctx.db,
    sql`with prior as (
          select id, deleted_at, profile_hidden_by_deletion as hid from users where id = ${actor.userId} for update),
        shown as (
          update profiles set visibility = 'visible'
          where user_id in (select id from prior where hid and deleted_at > ${cutoff}::timestamptz) returning user_id),
        restored as (
          update users u set deleted_at = null, profile_hidden_by_deletion = false from prior
          where u.id = prior.id and prior.deleted_at > ${cutoff}::timestamptz returning u.id)
        select exists (select 1 from restored) as restored, (select deleted_at from prior) as deleted_at`,
  );
  const row = rows[0];
  if (!row?.restored) {
    if (row?.deleted_at == null) throw new ApiError("conflict", "the account is not deleted");
    await markDeleted(ctx.kv, ctx.logger, actor.userId, new Date(row.deleted_at).getTime());
    throw new ApiError("account_deleted", `the ${GRACE_DAYS}-day grace period is over; the account is being erased`);
  }
  ctx.accounts.record(actor.userId, null, ctx.now);
  return { status: "active", restoredAt: new Date(ctx.now).toISOString() };
}
