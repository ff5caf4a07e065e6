import { and, asc, eq, lt } from "drizzle-orm";
import { payments } from "../../db/tables/payments";
import type { PaymentDeps } from "./context";
import { recheckCardB } from "./card-b";
import { recheckCrypto } from "./crypto";
import { recheckMobileMoney } from "./mobile-money";
import { ProviderFailure } from "./provider-http";
import { cardBConfig, configured, cryptoConfig, mobileMoneyConfig } from "./providers";
import { settlePayment, type PaymentRow, type ProviderOutcome, type SettleResult } from "./store";

export interface ReconcileReport {
  checked: number;
  credited: number;
  failed: number;
  expired: number;
  unchanged: number;
  errors: number;
}

const BATCH = 200;

/**
 * One pass over payments pending longer than PAYMENT_RECONCILE_AFTER_SECONDS: each is asked about
 * at its provider and moved on as a webhook would have moved it; one still pending after
 * PAYMENT_EXPIRE_AFTER_SECONDS (or a crypto intent past expiresAt) expires. The same function runs
 * from the Workers cron trigger and the Node interval; several runs at once are safe, because
 * every change goes through settlePayment's row lock and allowed transitions.
 */
export async function reconcilePayments(deps: PaymentDeps): Promise<ReconcileReport> {
  const now = deps.clock.now();
  const report: ReconcileReport = { checked: 0, credited: 0, failed: 0, expired: 0, unchanged: 0, errors: 0 };
  const due = await deps.db
    .select()
    .from(payments)
    .where(and(eq(payments.status, "pending"), lt(payments.createdAt, new Date(now - deps.config.PAYMENT_RECONCILE_AFTER_SECONDS * 1000))))
    .orderBy(asc(payments.createdAt))
    .limit(BATCH);
  for (const payment of due) {
    report.checked++;
    let outcome: ProviderOutcome;
    try {
      outcome = await askProvider(deps, payment);
    } catch (err) {
      report.errors++;
      deps.logger.warn("payment reconciliation could not reach the provider", { paymentId: payment.id, provider: payment.provider, error: err instanceof ProviderFailure ? err.message : String(err) });
      continue;
    }
    if (outcome.kind === "pending" && now - payment.createdAt.getTime() > deps.config.PAYMENT_EXPIRE_AFTER_SECONDS * 1000) {
      outcome = { kind: "expired", reason: "not paid in time" };
    }
    const result: SettleResult = await settlePayment(deps, { paymentId: payment.id, outcome });
    if (result === "credited") report.credited++;
    else if (result === "failed") report.failed++;
    else if (result === "expired") report.expired++;
    else report.unchanged++;
  }
  if (report.checked > 0) deps.logger.info("payment reconciliation", { ...report });
  return report;
}

/**
 * card-a's checkout carries an expiry equal to ours and its order webhook is retried by the
 * provider, so it is only expired here; the others are asked.
 */
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
