import { and, asc, eq, gt, inArray, lt, ne, notInArray, or, sql } from "drizzle-orm";
import { payments } from "../../db/tables/payments";
import type { PaymentDeps, Provider } from "./context";
import { recheckCardB } from "./card-b";
import { recheckCrypto } from "./crypto";
import { recheckMobileMoney } from "./mobile-money";
import { ProviderFailure } from "./provider-http";
import { cardBConfig, configured, cryptoConfig, mobileMoneyConfig } from "./providers";
import { settlePayment, type PaymentRow, type ProviderOutcome, type SettleResult } from "./store";

export interface ReconcileReport {
  /** Payments whose provider was asked (or would have been, when it is not configured). */
  checked: number;
  credited: number;
  failed: number;
  /** Payments asked about that expired, plus card-a requests expired without asking. */
  expired: number;
  unchanged: number;
  errors: number;
  /**
   * Payments taken but not asked about: the pass ran out of PAYMENT_RECONCILE_BUDGET_SECONDS, or
   * their provider had timed out earlier in the pass. They keep their place for the next pass.
   */
  deferred: number;
}

/** Payments asked about per pass; a larger backlog is worked through over the next passes. */
const BATCH = 200;

/**
 * One pass. card-a requests still pending after PAYMENT_EXPIRE_AFTER_SECONDS expire in one
 * statement (its provider has no lookup by our reference). Then up to BATCH payments due a check
 * (pending longer than PAYMENT_RECONCILE_AFTER_SECONDS, or failed or expired within
 * PAYMENT_EXPIRE_AFTER_SECONDS: another attempt on a card-b link may still succeed, coins sent to
 * an expired crypto intent still arrive, a push the status query called failed may still be paid)
 * are asked about at their provider, least recently asked first, and moved on as a webhook would
 * have moved them; one still pending after PAYMENT_EXPIRE_AFTER_SECONDS (or a crypto intent past
 * expiresAt that nothing was sent to) expires. With N payments due, each is asked within
 * ceil(N / BATCH) passes.
 * Providers are asked one at a time, so a pass is bounded: it stops asking once
 * PAYMENT_RECONCILE_BUDGET_SECONDS have gone by (it must end well before the next one is due), and
 * a provider that times out once is not asked again in the same pass (each further question would
 * cost the whole PAYMENT_PROVIDER_TIMEOUT_MS); the payments they leave are taken again, with their
 * place in the queue, by the next pass, and other providers' payments are taken in their stead.
 * The same function runs from the Workers cron trigger and the Node interval; several runs at
 * once are safe, because every change goes through settlePayment's row lock and allowed transitions.
 */
export async function reconcilePayments(deps: PaymentDeps): Promise<ReconcileReport> {
  const now = deps.clock.now();
  const deadline = now + deps.config.PAYMENT_RECONCILE_BUDGET_SECONDS * 1000;
  const report: ReconcileReport = { checked: 0, credited: 0, failed: 0, expired: 0, unchanged: 0, errors: 0, deferred: 0 };
  report.expired += await expireCardA(deps, now);
  const timedOut = new Set<Provider>();
  const taken: string[] = [];
  // Each round asks at least its first payment (its provider is not skipped, the budget was not
  // spent when it was taken) or ends the pass, so the loop ends.
  while (report.checked < BATCH && deps.clock.now() < deadline) {
    const limit = BATCH - report.checked;
    const claimed = await claimDue(deps, now, limit, { providers: [...timedOut], payments: taken });
    if (claimed.length === 0) break;
    const unasked: Claimed[] = [];
    for (const claim of claimed) {
      taken.push(claim.row.id);
      const payment = claim.row;
      if (timedOut.has(payment.provider as Provider) || deps.clock.now() >= deadline) {
        unasked.push(claim);
        continue;
      }
      report.checked++;
      let outcome: ProviderOutcome;
      try {
        outcome = await askProvider(deps, payment);
      } catch (err) {
        report.errors++;
        const timeout = err instanceof ProviderFailure && err.reason === "timeout";
        if (timeout) timedOut.add(payment.provider as Provider);
        deps.logger.warn(timeout ? "payment reconciliation skips a provider that timed out, for the rest of the pass" : "payment reconciliation could not reach the provider", {
          paymentId: payment.id,
          provider: payment.provider,
          error: err instanceof ProviderFailure ? err.message : String(err),
        });
        continue;
      }
      const result: SettleResult = await settlePayment(deps, { paymentId: payment.id, outcome: expiryOf(deps, payment, outcome, now) });
      if (result === "credited") report.credited++;
      else if (result === "failed") report.failed++;
      else if (result === "expired") report.expired++;
      else report.unchanged++;
    }
    report.deferred += unasked.length;
    await unclaim(deps, unasked, now);
    // Fewer than asked for: this round held every payment due from the providers still asked.
    if (claimed.length < limit) break;
  }
  if (report.checked > 0 || report.expired > 0 || report.deferred > 0) deps.logger.info("payment reconciliation", { ...report, timedOut: [...timedOut] });
  return report;
}

/**
 * Where a payment the provider still calls pending is over. Only here, with the provider's current
 * view in hand: a notification saying "pending" may be a redelivery of a state long past (a crypto
 * `waiting` sent before the coins arrived), so it never expires anything itself. A crypto intent
 * quotes its amount until expiresAt; past it, one nothing was sent to is over. One the provider has
 * seen money for waits until PAYMENT_EXPIRE_AFTER_SECONDS like any payment.
 */
function expiryOf(deps: PaymentDeps, payment: PaymentRow, outcome: ProviderOutcome, now: number): ProviderOutcome {
  if (outcome.kind !== "pending") return outcome;
  if (now - payment.createdAt.getTime() > deps.config.PAYMENT_EXPIRE_AFTER_SECONDS * 1000) {
    // Money the provider has seen and never finished for us is money a person must look at.
    const moneySeen = outcome.paymentSeen ? (outcome.uncreditable ?? "money on its way, never finished") : undefined;
    return { kind: "expired", reason: "not paid in time", ...(moneySeen ? { moneySeen } : {}) };
  }
  const intentRanOut = payment.provider === "crypto" && payment.expiresAt !== null && now > payment.expiresAt.getTime() && !outcome.paymentSeen;
  return intentRanOut ? { kind: "expired", reason: "intent expired" } : outcome;
}

/**
 * card-a's checkout carries an expiry equal to ours and its order webhook is retried by the
 * provider, so its requests are never asked about, only expired: in one statement, and only
 * from pending, so an order webhook crediting the same row at the same moment wins (the update
 * waits for its row lock, then finds the row no longer pending).
 */
async function expireCardA(deps: PaymentDeps, now: number): Promise<number> {
  const expired = await deps.db
    .update(payments)
    .set({ status: "expired", failureReason: "not paid in time", updatedAt: new Date(now) })
    .where(and(eq(payments.provider, "card-a"), eq(payments.status, "pending"), lt(payments.createdAt, new Date(now - deps.config.PAYMENT_EXPIRE_AFTER_SECONDS * 1000))))
    .returning({ id: payments.id });
  return expired.length;
}

interface Claimed {
  row: PaymentRow;
  /** Its reconciled_at before this pass stamped it, put back if it is not asked after all. */
  previous: Date | null;
}

/**
 * Takes the next `limit` payments due a check (none of the providers or payments in `skip`: those
 * this pass gave up on, or took already), least recently asked first (never asked before all
 * others), and stamps them asked in the same transaction, so a pass running at the same time takes
 * the ones after them instead of the same rows again. A row another pass or a webhook holds locked
 * at that moment is skipped: it is being dealt with.
 */
async function claimDue(deps: PaymentDeps, now: number, limit: number, skip: { providers: Provider[]; payments: string[] }): Promise<Claimed[]> {
  const dueSince = new Date(now - deps.config.PAYMENT_RECONCILE_AFTER_SECONDS * 1000);
  const retryAttemptsSince = new Date(now - deps.config.PAYMENT_EXPIRE_AFTER_SECONDS * 1000);
  return deps.db.transaction(async (tx) => {
    const due = await tx
      .select({ id: payments.id, previous: payments.reconciledAt })
      .from(payments)
      .where(
        and(
          lt(payments.createdAt, dueSince),
          skip.providers.length > 0 ? notInArray(payments.provider, skip.providers) : undefined,
          skip.payments.length > 0 ? notInArray(payments.id, skip.payments) : undefined,
          or(
            and(eq(payments.status, "pending"), ne(payments.provider, "card-a")),
            // Money can still arrive for these (see reconcilePayments); settling it credits as usual.
            and(inArray(payments.status, ["failed", "expired"]), ne(payments.provider, "card-a"), gt(payments.createdAt, retryAttemptsSince)),
          ),
        ),
      )
      .orderBy(sql`${payments.reconciledAt} asc nulls first`, asc(payments.createdAt))
      .limit(limit)
      .for("update", { skipLocked: true });
    if (due.length === 0) return [];
    const previous = new Map(due.map((d) => [d.id, d.previous]));
    const claimed = await tx.update(payments).set({ reconciledAt: new Date(now) }).where(inArray(payments.id, [...previous.keys()])).returning();
    // In the queue's order, so that a pass cut short by its budget leaves the most recently asked.
    const place = (c: Claimed) => c.previous?.getTime() ?? -Infinity;
    return claimed
      .map((row) => ({ row, previous: previous.get(row.id) ?? null }))
      .sort((a, b) => place(a) - place(b) || a.row.createdAt.getTime() - b.row.createdAt.getTime());
  });
}

/**
 * Puts back the reconciled_at of payments taken but not asked: stamped, they would wait behind
 * every other due payment although nobody asked about them. Only where this pass's stamp is still
 * there: a pass that took the row since has asked about it.
 */
async function unclaim(deps: PaymentDeps, unasked: Claimed[], now: number): Promise<void> {
  if (unasked.length === 0) return;
  const previous = sql.join(
    unasked.map((c) => sql`when ${c.row.id} then ${c.previous?.toISOString() ?? null}::timestamptz`),
    sql` `,
  );
  await deps.db
    .update(payments)
    .set({ reconciledAt: sql`case ${payments.id} ${previous} end` })
    .where(and(inArray(payments.id, unasked.map((c) => c.row.id)), eq(payments.reconciledAt, new Date(now))));
}

/** The provider's view of a payment; a provider without settings is not asked (it stays pending). */
async function askProvider(deps: PaymentDeps, payment: PaymentRow): Promise<ProviderOutcome> {
  switch (payment.provider) {
    case "card-b":
      return configured(cardBConfig, deps.config) ? recheckCardB(deps, payment) : { kind: "pending" };
    case "crypto":
      return configured(cryptoConfig, deps.config) ? recheckCrypto(deps, payment) : { kind: "pending" };
    case "mobile-money":
      return configured(mobileMoneyConfig, deps.config) ? recheckMobileMoney(deps, payment) : { kind: "pending" };
    default:
      return { kind: "pending" };
  }
}
