import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import type { KeyValueStore } from "../../kv/port";
import { idPattern, type IdGenerator } from "../../platform/ids";
import type { Logger } from "../../platform/logger";
import { utcDay } from "../discovery/filters";
import { profileCacheKey } from "../translations/member-text";
import { postTransaction, type Tx } from "../wallet/ledger";
import { GRACE_MS } from "./grace";
import { erasedBy } from "./member-columns";
import { dropMemberKeys } from "./member-keys";
import { DAY_MS } from "../../platform/clock";

/** The platform account an erased member's remaining coins go to (migration 0041). */
export const FORFEITED_ACCOUNT = "sys_forfeited";
/** Members erased per run at most; the next hourly run goes on with the rest. */
export const ERASURE_BATCH = 50;

/**
 * Rows that are the member's own, deleted with them: per table, the columns that may hold the
 * member (a swipe, a match or a block is gone for both sides). From MEMBER_COLUMNS, whose order
 * suits the foreign keys.
 */
export const MEMBER_ROWS: readonly { table: string; columns: readonly string[] }[] = (() => {
  const byTable = new Map<string, string[]>();
  for (const { table, column } of erasedBy("delete")) byTable.set(table, [...(byTable.get(table) ?? []), column]);
  return [...byTable].map(([table, columns]) => ({ table, columns }));
})();

/**
 * Columns that record who did something the platform keeps: money (the ledger, payments, voucher
 * redemptions) and work done as staff (reviews, tickets resolved, admin actions, content). They
 * are pointed at the member's tombstone, which identifies nobody. From MEMBER_COLUMNS.
 */
export const TOMBSTONED: readonly { table: string; column: string }[] = erasedBy("tombstone");

/**
 * Feed counter tables whose key starts with `day`. From the deletion on, the member is shown to
 * nobody (their profile is hidden) and served nothing (403), so none of their rows is dated after
 * the day after it; the tables keep only yesterday and today (discovery/impressions.ts). Bounding
 * `day` by that makes the delete a range of the key holding only what pruning has not reached yet,
 * usually nothing, where `user_id` or `viewer_id` alone would read every row of the last two days.
 */
const DATED = new Set(["profile_impression_viewers", "profile_impressions_capped"]);

export interface ErasureDeps {
  db: Db;
  kv: KeyValueStore;
  ids: IdGenerator;
  logger: Logger;
}

/**
 * The hourly erasure: every member whose grace period ended is removed for good, one transaction
 * each (see eraseMember). Throws after the batch when any failed, so the schedule reports it;
 * the failed ones are taken again next hour.
 */
export async function eraseDeletedAccounts(deps: ErasureDeps, now: number, limit = ERASURE_BATCH): Promise<number> {
  const due = await queryRows<{ id: string }>(
    deps.db,
    sql`select id from users where deleted_at <= ${new Date(now - GRACE_MS).toISOString()}::timestamptz order by deleted_at limit ${limit}`,
  );
  let erased = 0;
  const failed: string[] = [];
  for (const { id } of due) {
    try {
      if (await eraseMember(deps, id, now)) erased += 1;
    } catch (err) {
      failed.push(id);
      deps.logger.error("account erasure failed", { userId: id, error: err instanceof Error ? err.message : String(err) });
    }
  }
  if (erased > 0) deps.logger.info("accounts erased", { erased });
  if (failed.length > 0) throw new Error(`account erasure failed for ${failed.length} member(s)`);
  return erased;
}

const MEMBER_ID = idPattern("usr");

/**
 * The audit entries whose target or details hold the member's id. member_ids (migration 0049)
 * lists ids of the shape members get, through an index; any other id (a user row made by hand) is
 * looked for in the whole log.
 */
function auditEntriesNaming(userId: string) {
  if (MEMBER_ID.test(userId)) return sql`member_ids @> array[${userId}]::text[]`;
  return sql`(strpos(target_id, ${userId}) > 0 or strpos(details::text, ${userId}) > 0)`;
}

const ident = (name: string) => sql.raw(`"${name.replace(/"/g, '""')}"`);

/**
 * Erases one member whose grace period is over, in one transaction: their own rows are deleted,
 * their remaining coins are forfeited to FORFEITED_ACCOUNT by a ledger posting, the records the
 * platform must keep point at a new tombstone row instead of them (with free text and contact
 * details dropped), and the user row goes, with the identity provider's subject: a later sign-in
 * starts a new member. The store's keys follow once the transaction committed. False when the
 * member was restored or erased meanwhile.
 */
export async function eraseMember(deps: ErasureDeps, userId: string, now: number): Promise<boolean> {
  const at = new Date(now);
  const tombstone = deps.ids.next("tmb");
  const apiKeyIds = await deps.db.transaction(async (tx: Tx) => {
    const run = (query: ReturnType<typeof sql>) => queryRows<Record<string, unknown>>(tx as unknown as Db, query);
    const [user] = await run(sql`select id, deleted_at from users where id = ${userId} and deleted_at <= ${new Date(now - GRACE_MS).toISOString()}::timestamptz for update`);
    if (!user) return null;
    const lastDay = utcDay(new Date(user.deleted_at as Date | string).getTime() + DAY_MS);
    const keyIds = (await run(sql`select id from api_keys where created_by = ${userId}`)).map((r) => String(r.id));

    // Translations of the profile are keyed by its text, not by the member.
    const [profile] = (await run(sql`select bio, tagline, interests from profiles where user_id = ${userId}`)) as { bio: string | null; tagline: string | null; interests: string[] }[];
    if (profile) await run(sql`delete from translation_cache where kind = 'profile' and cache_key = ${await profileCacheKey(profile)}`);

    await run(sql`insert into users (id, subject, role, erased_at, created_at) values (${tombstone}, ${`tombstone:${tombstone}`}, 'user', ${at.toISOString()}::timestamptz, ${at.toISOString()}::timestamptz)`);

    const [wallet] = (await run(sql`select id, balance::text as balance from ledger_accounts where user_id = ${userId} for update`)) as { id: string; balance: string }[];
    if (wallet && Number(wallet.balance) > 0) {
      const coins = Number(wallet.balance);
      await postTransaction(tx, {
        id: deps.ids.next("txn"),
        type: "forfeiture",
        at,
        actorUserId: tombstone,
        postings: [
          { accountId: wallet.id, amount: -coins },
          { accountId: FORFEITED_ACCOUNT, amount: coins },
        ],
      });
    }
    // Transfer notes are people's words, to or from the member: dropped; amounts stay.
    if (wallet) await run(sql`update ledger_transactions set note = null where note is not null and id in (select transaction_id from ledger_postings where account_id = ${wallet.id})`);

    // Events about the member in other people's streams: those are the people they matched or winked with.
    await run(sql`delete from events where data->>'userId' = ${userId} and user_id in (
      select user_low from matches where user_high = ${userId} union select user_high from matches where user_low = ${userId}
      union select sender_id from winks where recipient_id = ${userId} union select recipient_id from winks where sender_id = ${userId})`);
    // A partner's outbox and delivery log go with the partner profile.
    await run(sql`delete from delivery_records where message_id in (select o.id from outbox_messages o join partners p on p.id = o.target_id where p.user_id = ${userId})`);
    await run(sql`delete from outbox_messages where target_id in (select id from partners where user_id = ${userId})`);

    // Runs a platform event of the member's started carry their name and address to the
    // automation engine, in the run and in its hand-over message, found by the run's id in its
    // body (outbox_workflow_run_idx). The ids go in as arrays rather than joined: in a join the
    // planner sets its estimate of the member's runs against a guess for that index, which has no
    // statistics, and from a hundred or so runs on prefers reading the whole outbox.
    const handovers = sql`select o.id from outbox_messages o where o.kind = 'workflow.run'
      and (o.body::jsonb)->'data'->>'runId' = any(array(select id from workflow_runs where input->>'userId' = ${userId}))`;
    await run(sql`delete from delivery_records where message_id = any(array(${handovers}))`);
    await run(sql`delete from outbox_messages where id = any(array(${handovers}))`);
    await run(sql`delete from workflow_runs where input->>'userId' = ${userId}`);

    // ledger_transactions has no index on its actor (every transfer would pay for one): the
    // member's own transactions are found through their wallet's postings. Only someone who acted
    // as an admin (awards into others' wallets, each in the audit log) needs the whole table read.
    if (wallet) {
      await run(sql`update ledger_transactions set actor_user_id = ${tombstone}
        where actor_user_id = ${userId} and id in (select transaction_id from ledger_postings where account_id = ${wallet.id})`);
    }
    const [admin] = await run(sql`select 1 as found from admin_audit_log where actor_user_id = ${userId} limit 1`);
    if (admin) await run(sql`update ledger_transactions set actor_user_id = ${tombstone} where actor_user_id = ${userId}`);
    for (const { table, column } of TOMBSTONED) {
      if (table === "ledger_transactions") continue;
      await run(sql`update ${ident(table)} set ${ident(column)} = ${tombstone} where ${ident(column)} = ${userId}`);
    }
    for (const { table, columns } of MEMBER_ROWS) {
      const dated = DATED.has(table) ? sql` and day <= ${lastDay}::date` : sql``;
      await run(sql`delete from ${ident(table)} where (${sql.join(columns.map((c) => sql`${ident(c)} = ${userId}`), sql` or `)})${dated}`);
    }
    // Payments stay for accounting; what the payer entered (phone, email, names) does not.
    await run(sql`update payments set details = '{}'::jsonb, idempotency_key = null, callback_token = null where user_id = ${tombstone}`);
    // Admin actions about the member keep their record, naming the tombstone instead, wherever
    // they named the member: as the target or in the details, free text an admin typed included.
    await run(sql`update admin_audit_log set target_id = replace(target_id, ${userId}, ${tombstone}), details = replace(details::text, ${userId}, ${tombstone})::jsonb
      where ${auditEntriesNaming(userId)}`);

    await run(sql`delete from users where id = ${userId}`);
    return keyIds;
  });
  if (apiKeyIds === null) return false;
  await dropMemberKeys(deps.kv, userId, apiKeyIds, now).catch((err: unknown) => {
    // What is left expires by itself: the AI context within minutes, the deletion marker a day after the grace period.
    deps.logger.warn("account erasure: store keys not dropped", { tombstone, error: String(err) });
  });
  return true;
}
