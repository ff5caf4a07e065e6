import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import { ApiError } from "../../errors";
import { recordAudit } from "../audit/log";
import { assertAdmin, type Principal } from "../../auth/principal";
import { completeKeyWithEffect } from "../idempotency/keys";
import type { MoneyContext } from "./context";
import { MINT_ACCOUNT, ensureWallet, postTransaction, postTransfer } from "./ledger";

export interface TransferResult {
  success: true;
  balance: number;
  transferredAmount: number;
}

function checkAmount(amount: number, max: number): void {
  if (!Number.isSafeInteger(amount) || amount <= 0) throw new ApiError("invalid_input", "amount must be a positive whole number of coins", { details: [{ path: "amount", message: "positive integer" }] });
  if (amount > max) throw new ApiError("invalid_input", `amount exceeds the single-transfer cap of ${max} coins`, { details: [{ path: "amount", message: `at most ${max}` }] });
}

/**
 * Moves coins between two people in one ledger transaction; the sender's wallet cannot overdraw.
 * Without an Idempotency-Key the transfer is one statement, its own transaction; with one, the
 * key's answer commits in the same transaction as the transfer.
 */
export async function transfer(m: MoneyContext, actor: Principal, input: { toUserId: string; amount: number; note?: string }): Promise<TransferResult> {
  if (input.toUserId === actor.userId) throw new ApiError("invalid_input", "cannot transfer to yourself", { details: [{ path: "toUserId", message: "must be someone else" }] });
  checkAmount(input.amount, m.maxTransfer);
  const posting = { id: m.ids.next("txn"), fromUserId: actor.userId, toUserId: input.toUserId, amount: input.amount, note: input.note ?? null, at: new Date(m.now) };
  const answer = (balance: number): TransferResult => ({ success: true, balance, transferredAmount: input.amount });
  const idempotency = m.idempotency;
  if (!idempotency) return answer(await postTransfer(m.db, posting, m.ids));
  return m.db.transaction(async (tx) => {
    const result = answer(await postTransfer(tx, posting, m.ids));
    await completeKeyWithEffect(tx, idempotency, 200, result, m.now);
    return result;
  });
}

export interface AwardResult {
  success: true;
  balance: number;
  awardedAmount: number;
}

/**
 * An admin grants coins; they enter the platform from the mint. A member who deleted their
 * account gets none: the coins would be forfeited at erasure. The share lock on the member's row
 * orders the award against a deletion or an erasure running at the same time.
 */
export async function awardCoins(m: MoneyContext, actor: Principal, input: { userId: string; amount: number; reason: string }): Promise<AwardResult> {
  assertAdmin(actor);
  checkAmount(input.amount, m.maxTransfer);
  return m.db.transaction(async (tx) => {
    const [member] = await queryRows<{ deleted: boolean }>(tx as unknown as Db, sql`select deleted_at is not null as deleted from users where id = ${input.userId} for share`);
    if (!member) throw new ApiError("not_found", "no such user");
    if (member.deleted) throw new ApiError("conflict", "this member deleted their account; coins can be awarded again if they restore it");
    const wallet = await ensureWallet(tx, input.userId, m.ids);
    const txnId = m.ids.next("txn");
    const balances = await postTransaction(tx, {
      id: txnId,
      type: "award",
      at: new Date(m.now),
      note: input.reason,
      actorUserId: actor.userId,
      postings: [
        { accountId: MINT_ACCOUNT, amount: -input.amount },
        { accountId: wallet, amount: input.amount },
      ],
    });
    await recordAudit(tx, m.ids, { actor, requestId: m.requestId }, m.now, { action: "coins.award", targetType: "user", targetId: input.userId, details: { amount: input.amount, reason: input.reason, transactionId: txnId } });
    const result: AwardResult = { success: true, balance: balances.get(wallet) ?? 0, awardedAmount: input.amount };
    if (m.idempotency) await completeKeyWithEffect(tx, m.idempotency, 200, result, m.now);
    return result;
  });
}
