import { and, asc, eq, gt, inArray, lt, ne, or, sql } from "drizzle-orm";
import { payments } from "../../db/tables/payments";
import type { PaymentDeps } from "./context";
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
 * The same function runs from the Workers cron trigger and the Node interval; several runs at
 * once are safe, because every change goes through settlePayment's row lock and allowed transitions.
 */
export async function reconcilePayments(deps: PaymentDeps): Promise<ReconcileReport> {
  const now = deps.clock.now();
  const report: ReconcileReport = { checked: 0, credited: 0, failed: 0, expired: 0, unchanged: 0, errors: 0 };
  report.expired += await expireCardA(deps, now);
  for (const payment of await claimDue(deps, now)) {
    report.checked++;
    let outcome: ProviderOutcome;
    try {
      outcome = await askProvider(deps, payment);
    } catch (err) {
      report.errors++;
      deps.logger.warn("payment reconciliation could not reach the provider", { paymentId: payment.id, provider: payment.provider, error: err instanceof ProviderFailure ? err.message : String(err) });
      continue;
    }
    const result: SettleResult = await settlePayment(deps, { paymentId: payment.id, outcome: expiryOf(deps, payment, outcome, now) });
    if (result === "credited") report.credited++;
    else if (result === "failed") report.failed++;
    else if (result === "expired") report.expired++;
    else report.unchanged++;
  }
  if (report.checked > 0 || report.expired > 0) deps.logger.info("payment reconciliation", { ...report });
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

/**
 * Takes the next BATCH payments due a check, least recently asked first (never asked before all
 * others), and stamps them asked in the same statement, so the next pass takes the ones after
 * them instead of the same rows again. A row another pass or a webhook holds locked at that
 * moment is skipped: it is being dealt with.
 */
async function claimDue(deps: PaymentDeps, now: number): Promise<PaymentRow[]> {
  const dueSince = new Date(now - deps.config.PAYMENT_RECONCILE_AFTER_SECONDS * 1000);
  const retryAttemptsSince = new Date(now - deps.config.PAYMENT_EXPIRE_AFTER_SECONDS * 1000);
  const due = deps.db
    .select({ id: payments.id })
    .from(payments)
    .where(
      and(
        lt(payments.createdAt, dueSince),
        or(
          and(eq(payments.status, "pending"), ne(payments.provider, "card-a")),
          // Money can still arrive for these (see reconcilePayments); settling it credits as usual.
          and(inArray(payments.status, ["failed", "expired"]), ne(payments.provider, "card-a"), gt(payments.createdAt, retryAttemptsSince)),
        ),
      ),
    )
    .orderBy(sql`${payments.reconciledAt} asc nulls first`, asc(payments.createdAt))
    .limit(BATCH)
    .for("update", { skipLocked: true });
  const claimed = await deps.db.update(payments).set({ reconciledAt: new Date(now) }).where(inArray(payments.id, due)).returning();
  return claimed.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
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
