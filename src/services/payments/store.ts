import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { paymentEvents, payments } from "../../db/tables/payments";
import { ApiError } from "../../errors";
import { KEY_RETENTION_MS } from "../idempotency/keys";
import { MINT_ACCOUNT, ensureWallet, postTransaction, type Tx } from "../wallet/ledger";
import type { PaymentDeps, Provider } from "./context";

export type PaymentRow = typeof payments.$inferSelect;
export type PaymentStatus = "pending" | "completed" | "failed" | "expired";

/** Our id prefix per store; a status lookup by id reads the prefix to know where to look. */
export const ID_PREFIX: Record<Provider, string> = { "card-a": "fund", "card-b": "cbtx", crypto: "cpay", "mobile-money": "mmreq" };

export async function createPending(
  deps: PaymentDeps,
  input: { provider: Provider; userId: string; amount: number; currency: string; coins: number; callbackToken?: string; expiresAt?: Date; details?: Record<string, unknown> },
): Promise<PaymentRow> {
  const idempotencyKey = deps.idempotencyKey ?? null;
  const insert = async () => {
    const now = new Date(deps.clock.now());
    const [row] = await deps.db
      .insert(payments)
      .values({
        id: deps.ids.next(ID_PREFIX[input.provider]),
        provider: input.provider,
        userId: input.userId,
        status: "pending",
        amount: input.amount,
        currency: input.currency,
        coins: input.coins,
        callbackToken: input.callbackToken ?? null,
        idempotencyKey,
        expiresAt: input.expiresAt ?? null,
        details: input.details ?? {},
        createdAt: now,
        updatedAt: now,
      })
      // Without a key nothing can conflict here; with one, only an earlier attempt under it.
      .onConflictDoNothing({ target: [payments.userId, payments.idempotencyKey] })
      .returning();
    return row;
  };
  const row = await insert();
  if (row) return row;
  // Only after a request with this key died: the common path is the one insert above.
  await settleEarlierAttempt(deps, input.userId, idempotencyKey as string);
  const retried = await insert();
  if (!retried) throw new Error("payment insert met its Idempotency-Key again after the earlier payment let go of it");
  return retried;
}

/**
 * A payment already holding this request's Idempotency-Key was made by an earlier request with
 * the key that died before it could answer (the key's in-flight takeover, services/idempotency),
 * and that request may have reached the provider. An STK push may have rung the payer's phone, so
 * it is not sent again: the answer is the 502 of a push whose answer never came, naming the
 * payment. A checkout reaches the payer only through our answer, which never left, so the earlier
 * one is dropped (marked failed if still pending; a payment that arrives for it is still credited)
 * and a new one is made. A payment older than the key's retention was made by another request
 * that happened to use the same key before it expired, and only lets go of it.
 */
async function settleEarlierAttempt(deps: PaymentDeps, userId: string, idempotencyKey: string): Promise<void> {
  const [earlier] = await deps.db
    .select()
    .from(payments)
    .where(and(eq(payments.userId, userId), eq(payments.idempotencyKey, idempotencyKey)));
  // Let go of it meanwhile (markFailed): the insert can go ahead.
  if (!earlier) return;
  const sameRequest = deps.clock.now() - earlier.createdAt.getTime() < KEY_RETENTION_MS;
  if (sameRequest && earlier.provider === "mobile-money") {
    throw new ApiError(
      "provider_error",
      `an earlier request with this Idempotency-Key sent this push, which may have reached the phone, so it is not sent again; payment ${earlier.id} is ${earlier.status}: GET /api/payments/${earlier.id}/status tells how it ends`,
      { effectMayExist: true },
    );
  }
  await deps.db
    .update(payments)
    .set({
      idempotencyKey: null,
      ...(sameRequest && earlier.status === "pending" ? { status: "failed", failureReason: "superseded by a retry with the same Idempotency-Key" } : {}),
      updatedAt: new Date(deps.clock.now()),
    })
    .where(eq(payments.id, earlier.id));
}

/** The provider accepted the request: remember its reference and what the payer was shown. */
export async function attachProvider(deps: PaymentDeps, id: string, providerRef: string, details: Record<string, unknown>, extra: { amount?: number } = {}): Promise<void> {
  await deps.db
    .update(payments)
    .set({
      providerRef,
      details: sql`${payments.details} || ${JSON.stringify(details)}::jsonb`,
      ...(extra.amount !== undefined ? { amount: extra.amount } : {}),
      updatedAt: new Date(deps.clock.now()),
    })
    .where(eq(payments.id, id));
}

/** The provider refused or failed while creating it: the payer never saw a checkout, so it ends here. */
export async function markFailed(deps: PaymentDeps, id: string, reason: string): Promise<void> {
  await deps.db
    .update(payments)
    // The request's key is freed with it (a 5xx without a possible effect), so the payment lets go of it too.
    .set({ status: "failed", failureReason: reason, idempotencyKey: null, updatedAt: new Date(deps.clock.now()) })
    .where(and(eq(payments.id, id), eq(payments.status, "pending")));
}

export async function findPayment(db: Db, id: string): Promise<PaymentRow | undefined> {
  const [row] = await db.select().from(payments).where(eq(payments.id, id));
  return row;
}

export async function findByCallbackToken(db: Db, token: string): Promise<PaymentRow | undefined> {
  const [row] = await db.select().from(payments).where(and(eq(payments.callbackToken, token), eq(payments.provider, "mobile-money")));
  return row;
}

export async function eventSeen(db: Db, provider: Provider, eventId: string): Promise<boolean> {
  const rows = await db
    .select({ id: paymentEvents.eventId })
    .from(paymentEvents)
    .where(and(eq(paymentEvents.provider, provider), eq(paymentEvents.eventId, eventId)));
  return rows.length > 0;
}

/**
 * What the provider says happened.
 * - `paid`: money at our price was taken; `charge` is the provider's id of that charge (order,
 *   transaction, payment, STK request), remembered on the credit so a later charge is told apart.
 * - `pending` changes nothing here: a notification saying so may be a late redelivery of an older
 *   state, so only reconciliation, having asked the provider, turns it into `expired`
 *   (reconcile.ts). `paymentSeen`: the provider has seen money for it, not yet enough or not yet
 *   confirmed; `uncreditable` says why money it has seen cannot credit this payment (partly paid,
 *   another price), should it stay so.
 * - `expired` from reconciliation carries `moneySeen` when the provider had seen money for it.
 * - `uncreditable`: the provider took money for this payment that will not be credited (an order
 *   that does not match, a deposit under another payment id).
 * - `reversed`: a refund or chargeback; `charge` when the event says which charge it undoes.
 */
export type ProviderOutcome =
  | { kind: "paid"; charge?: string }
  | { kind: "failed"; reason: string }
  | { kind: "expired"; reason: string; moneySeen?: string }
  | { kind: "pending"; paymentSeen?: boolean; uncreditable?: string }
  | { kind: "uncreditable"; note: string; charge?: string }
  | { kind: "reversed"; reason: string; charge?: string };

export type SettleResult = "duplicate" | "unknown_payment" | "credited" | "failed" | "expired" | "unchanged";

/**
 * Cases a person must handle, each logged at error under one message to grep and alert on, and
 * recorded on the payment (review_reason) for an admin to list. Credits are never reversed and
 * money is never sent back automatically.
 */
export const REVIEW_MESSAGES = {
  second_payment: "payment received for a completed funding request: refund by hand",
  not_credited: "payment received but not credited: review",
  reversed: "refund or chargeback on a credited payment: review",
} as const;
export type ReviewKind = keyof typeof REVIEW_MESSAGES;

interface Review {
  kind: ReviewKind;
  note: string;
}

/** Where failure_reason marks a payment failed by a refund or chargeback (see transition). */
const REVERSED_PREFIX = "reversed: ";

/**
 * Moves a payment on from one provider event, in one transaction: the event is recorded first
 * (a replay or a concurrent duplicate meets the primary key and stops there), then the payment
 * row is locked and changed only along allowed transitions. Completed is final; the credit and
 * the move to completed commit together, and the ledger's unique external_ref (the payment id)
 * refuses a second credit even if this code were wrong. A case for a person is recorded in the
 * same transaction, and logged once it has committed.
 */
export async function settlePayment(
  deps: PaymentDeps,
  input: { paymentId: string; outcome: ProviderOutcome; event?: { provider: Provider; id: string; kind: string }; providerRef?: string },
): Promise<SettleResult> {
  const now = new Date(deps.clock.now());
  const settled = await deps.db.transaction(async (tx): Promise<{ result: SettleResult; review?: Review & { row: PaymentRow } }> => {
    if (input.event) {
      const claimed = await tx
        .insert(paymentEvents)
        .values({ provider: input.event.provider, eventId: input.event.id, paymentId: null, kind: input.event.kind, outcome: "received", receivedAt: now })
        .onConflictDoNothing()
        .returning({ id: paymentEvents.eventId });
      if (claimed.length === 0) return { result: "duplicate" };
    }
    const [row] = await tx.select().from(payments).where(eq(payments.id, input.paymentId)).for("update");
    const change = row ? await transition(deps, tx, row, input.outcome, now, input.providerRef) : { result: "unknown_payment" as const };
    const review = row && change.review && (await recordReview(tx, row, change.review, now)) ? { ...change.review, row } : undefined;
    if (input.event) {
      await tx
        .update(paymentEvents)
        .set({ paymentId: row ? row.id : null, outcome: review ? "needs_review" : change.result })
        .where(and(eq(paymentEvents.provider, input.event.provider), eq(paymentEvents.eventId, input.event.id)));
    }
    // Every funding credit locks the mint's row, so the posting comes last: the lock is then held
    // for one statement and the commit, not for the writes around it.
    if (change.post) await change.post();
    return { result: change.result, review };
  });
  if (settled.review) {
    const { kind, note, row } = settled.review;
    deps.logger.error(REVIEW_MESSAGES[kind], { paymentId: row.id, provider: row.provider, userId: row.userId, review: kind, note });
  }
  return settled.result;
}

interface Change {
  result: SettleResult;
  post?: () => Promise<unknown>;
  review?: Review;
}

async function transition(deps: PaymentDeps, tx: Tx, row: PaymentRow, outcome: ProviderOutcome, now: Date, providerRef?: string): Promise<Change> {
  if (row.status === "completed") return { result: "unchanged", review: reviewAfterCredit(row, outcome) };
  switch (outcome.kind) {
    case "paid": {
      // Money the provider confirms was taken is credited even after a failed attempt or our own
      // expiry (a crypto intent's expiresAt included): the payer was charged.
      const change = await credit(deps, tx, row, now, providerRef, outcome.charge);
      // Unless it was refunded or charged back before we learnt it was paid: then the coins stand
      // for money the payer has back, for a person to settle.
      const undone = row.failureReason?.startsWith(REVERSED_PREFIX);
      return undone ? { ...change, review: { kind: "reversed", note: `paid after ${row.failureReason?.slice(REVERSED_PREFIX.length)}` } } : change;
    }
    case "failed":
    case "expired": {
      if (row.status !== "pending") return { result: "unchanged" };
      await setStatus(tx, row.id, outcome.kind, now, outcome.reason);
      const moneySeen = outcome.kind === "expired" ? outcome.moneySeen : undefined;
      return { result: outcome.kind, review: moneySeen ? { kind: "not_credited", note: `expired with money seen: ${moneySeen}` } : undefined };
    }
    case "reversed":
      if (row.status !== "pending") return { result: "unchanged" };
      await setStatus(tx, row.id, "failed", now, `${REVERSED_PREFIX}${outcome.reason}`);
      return { result: "failed" };
    case "uncreditable":
      return { result: "unchanged", review: { kind: "not_credited", note: outcome.note } };
    case "pending":
      // Money seen for a payment already over (expired, failed) that cannot credit it as it stands.
      if (row.status !== "pending" && outcome.uncreditable) return { result: "unchanged", review: { kind: "not_credited", note: `${row.status}, then ${outcome.uncreditable}` } };
      return { result: "unchanged" };
  }
}

/** What an event after the credit means: nothing, or money a person must handle. */
function reviewAfterCredit(row: PaymentRow, outcome: ProviderOutcome): Review | undefined {
  const credited = creditedCharge(row);
  switch (outcome.kind) {
    case "paid":
      // The charge that was credited, told again (a webhook after reconciliation found it), is no news.
      return outcome.charge !== undefined && outcome.charge === credited ? undefined : { kind: "second_payment", note: `charge ${outcome.charge ?? "unnamed"} after the credited one` };
    case "uncreditable":
      return { kind: "second_payment", note: outcome.note };
    case "reversed":
      // Undoing another charge (the second payment, refunded by hand) leaves the credit standing on paid money.
      return outcome.charge !== undefined && credited !== undefined && outcome.charge !== credited ? undefined : { kind: "reversed", note: outcome.reason };
    default:
      return undefined;
  }
}

function creditedCharge(row: PaymentRow): string | undefined {
  const charge = (row.details as { creditedCharge?: unknown }).creditedCharge;
  return typeof charge === "string" ? charge : undefined;
}

/**
 * Adds a review line to the locked row; false when the same line is there already (reconciliation
 * asks about an expired payment every pass, and a person needs telling once).
 */
async function recordReview(tx: Tx, row: PaymentRow, review: Review, now: Date): Promise<boolean> {
  const line = `${review.kind}: ${review.note}`;
  if (row.reviewReason?.split("; ").includes(line)) return false;
  await tx
    .update(payments)
    .set({ reviewReason: row.reviewReason ? `${row.reviewReason}; ${line}` : line, reviewFlaggedAt: now })
    .where(eq(payments.id, row.id));
  return true;
}

async function setStatus(tx: Tx, id: string, status: PaymentStatus, now: Date, reason: string): Promise<void> {
  await tx.update(payments).set({ status, failureReason: reason, updatedAt: now }).where(eq(payments.id, id));
}

/** Marks the payment completed and prepares its credit; settlePayment posts it last, in the same transaction. */
async function credit(deps: PaymentDeps, tx: Tx, row: PaymentRow, now: Date, providerRef?: string, charge?: string): Promise<Change> {
  const wallet = await ensureWallet(tx, row.userId, deps.ids);
  const txnId = deps.ids.next("txn");
  await tx
    .update(payments)
    .set({
      status: "completed",
      ledgerTransactionId: txnId,
      completedAt: now,
      updatedAt: now,
      failureReason: null,
      ...(providerRef && row.providerRef === null ? { providerRef } : {}),
      ...(charge !== undefined ? { details: sql`${payments.details} || ${JSON.stringify({ creditedCharge: charge })}::jsonb` } : {}),
    })
    .where(eq(payments.id, row.id));
  const post = () =>
    postTransaction(tx, {
      id: txnId,
      type: "funding",
      at: now,
      note: `${row.provider} payment ${row.id}`,
      actorUserId: row.userId,
      externalRef: `payment:${row.id}`,
      postings: [
        { accountId: MINT_ACCOUNT, amount: -row.coins },
        { accountId: wallet, amount: row.coins },
      ],
    });
  return { result: "credited", post };
}
