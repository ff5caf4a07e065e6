import type { Principal } from "../../auth/principal";
import { ApiError } from "../../errors";
import { timingSafeEqual } from "../../platform/hash";
import type { PaymentDeps } from "./context";
import { coinsFor, normaliseCurrency } from "./money";
import { ProviderFailure, callProvider, expectCheckoutUrl } from "./provider-http";
import { cardBConfig, type CardBConfig } from "./providers";
import { attachProvider, createPending, eventSeen, findPayment, markFailed, settlePayment, type PaymentRow, type ProviderOutcome, type SettleResult } from "./store";
import { idField, parseObject, stringId } from "./webhook-body";

export interface CardBCheckout {
  status: "pending";
  checkoutUrl: string;
  sessionId: string;
  transactionId: string;
  currency: string;
}

/**
 * A pending card-collection transaction, then a hosted payment link at the provider
 * (`POST /v3/payments` with our transaction id as `tx_ref`). The record exists before the payer can
 * pay, so a webhook can never arrive for a payment we do not know.
 */
export async function createCardBCheckout(
  deps: PaymentDeps,
  actor: Principal,
  input: { amount: number; phoneNumber: string; email: string; currency?: string },
  publicBaseUrl: () => string,
): Promise<CardBCheckout> {
  const provider = cardBConfig(deps.config);
  const redirectUrl = `${publicBaseUrl()}/api/v1/payments/card-b/redirect`;
  const currency = normaliseCurrency(input.currency, "USD");
  const coins = coinsFor(deps.config, input.amount, currency);
  const row = await createPending(deps, { provider: "card-b", userId: actor.userId, amount: input.amount, currency, coins, details: { email: input.email, phoneNumber: input.phoneNumber } });
  try {
    const answer = await callProvider<{ status?: unknown; data?: { link?: unknown } }>(deps, "card-b", `${provider.url}/v3/payments`, {
      method: "POST",
      headers: { authorization: `Bearer ${provider.secretKey}` },
      json: {
        tx_ref: row.id,
        amount: input.amount,
        currency,
        redirect_url: redirectUrl,
        customer: { email: input.email, phonenumber: input.phoneNumber },
        meta: { user_id: actor.userId },
        customizations: { title: "Wallet top-up" },
      },
    });
    if (answer?.status !== "success") throw new ProviderFailure("card-b", "body", "payment link not created");
    const checkoutUrl = expectCheckoutUrl("card-b", answer.data?.link, "payment link");
    // The hosted page's id is the last segment of its link; it names the checkout session.
    const sessionId = new URL(checkoutUrl).pathname.split("/").filter(Boolean).pop() ?? row.id;
    await attachProvider(deps, row.id, `session:${sessionId}`, { checkoutUrl, sessionId });
    return { status: "pending", checkoutUrl, sessionId, transactionId: row.id, currency };
  } catch (err) {
    if (!(err instanceof ProviderFailure)) throw err;
    await markFailed(deps, row.id, `provider_error: ${err.reason}`);
    throw err.toApiError();
  }
}

interface VerifiedTransaction {
  id?: unknown;
  tx_ref?: unknown;
  status?: unknown;
  amount?: unknown;
  currency?: unknown;
}

/** Status, amount, currency and our reference must all be what we stored; anything else is not a payment of it. */
function judge(deps: PaymentDeps, payment: PaymentRow, tx: VerifiedTransaction): ProviderOutcome {
  if (tx.tx_ref !== payment.id) return { kind: "pending" };
  if (tx.status === "failed") return { kind: "failed", reason: "card payment failed" };
  if (tx.status !== "successful") return { kind: "pending" };
  if (Number(tx.amount) !== payment.amount || String(tx.currency ?? "").toUpperCase() !== payment.currency) {
    deps.logger.error("card-b transaction does not match what we stored", { paymentId: payment.id, amount: tx.amount, currency: tx.currency });
    return { kind: "pending", paymentSeen: true, uncreditable: `transaction ${String(tx.id)} charged ${String(tx.amount)} ${String(tx.currency)}` };
  }
  return { kind: "paid", charge: String(tx.id) };
}

async function verifyTransaction(deps: PaymentDeps, provider: CardBConfig, providerTxId: string): Promise<VerifiedTransaction | null> {
  const answer = await callProvider<{ status?: unknown; data?: VerifiedTransaction }>(
    deps,
    "card-b",
    `${provider.url}/v3/transactions/${encodeURIComponent(providerTxId)}/verify`,
    { headers: { authorization: `Bearer ${provider.secretKey}` } },
  );
  return answer?.status === "success" && answer.data ? answer.data : null;
}

/** Money the provider gave back or had taken back after a charge. */
const REVERSAL_EVENTS = new Set(["refund.completed", "chargeback.created"]);

interface CardBWebhook {
  event?: unknown;
  data?: { id?: unknown; tx_ref?: unknown; status?: unknown };
}

/**
 * The provider's webhook. Its `Verification-Hash` is a static shared secret, not a signature of the
 * body, so the body is only a hint: the transaction is fetched again from the verify API and only
 * what that says (status, amount, currency, our reference) moves the payment.
 */
export async function handleCardBWebhook(deps: PaymentDeps, rawBody: string, hash: string | undefined): Promise<{ received: true; result: SettleResult | "ignored" }> {
  const provider = cardBConfig(deps.config);
  if (!hash || !(await timingSafeEqual(provider.webhookSecret, hash))) throw new ApiError("unauthorized", "invalid verification hash");
  const body = parseObject(rawBody, "webhook body") as CardBWebhook;
  const event = typeof body.event === "string" ? body.event : "";
  const txId = idField(body.data?.id, "data.id");
  const txRef = stringId(body.data?.tx_ref, "data.tx_ref");
  if (!(event === "charge.completed" || REVERSAL_EVENTS.has(event)) || txId === undefined || txRef === undefined) {
    deps.logger.info("card-b webhook ignored", { event });
    return { received: true, result: "ignored" };
  }
  const eventId = `${event}:${txId}`;
  // A replay need not cost a verify call; a concurrent duplicate is stopped by the event's key.
  if (await eventSeen(deps.db, "card-b", eventId)) return { received: true, result: "duplicate" };
  const payment = await findPayment(deps.db, txRef);
  if (!payment || payment.provider !== "card-b") {
    deps.logger.warn("card-b webhook for an unknown transaction", { txRef });
    return { received: true, result: "unknown_payment" };
  }
  if (REVERSAL_EVENTS.has(event)) {
    // Nothing at the provider confirms a refund by our reference, so the body is taken as it is:
    // it only ever records the payment for a person (or fails a pending one, which reconciliation
    // still asks about), never takes coins back.
    const result = await settlePayment(deps, { paymentId: payment.id, outcome: { kind: "reversed", reason: `${event} for transaction ${txId}` }, event: { provider: "card-b", id: eventId, kind: event } });
    return { received: true, result };
  }
  let verified: VerifiedTransaction | null;
  try {
    verified = await verifyTransaction(deps, provider, txId);
  } catch (err) {
    // Nothing is recorded, so the provider's retry is processed afresh.
    if (err instanceof ProviderFailure) throw err.toApiError();
    throw err;
  }
  const outcome = verified ? judge(deps, payment, verified) : { kind: "pending" as const };
  const result = await settlePayment(deps, {
    paymentId: payment.id,
    outcome,
    // Only a final answer uses the event up: while the provider still says pending, or disagrees
    // with us, the provider's retry (or reconciliation) asks again.
    event: outcome.kind === "pending" ? undefined : { provider: "card-b", id: eventId, kind: event },
    providerRef: outcome.kind === "paid" ? txId : undefined,
  });
  return { received: true, result };
}

/** Reconciliation: the provider's view of our reference (`verify_by_reference`). */
export async function recheckCardB(deps: PaymentDeps, payment: PaymentRow): Promise<ProviderOutcome> {
  const provider = cardBConfig(deps.config);
  try {
    const answer = await callProvider<{ status?: unknown; data?: VerifiedTransaction }>(
      deps,
      "card-b",
      `${provider.url}/v3/transactions/verify_by_reference?tx_ref=${encodeURIComponent(payment.id)}`,
      { headers: { authorization: `Bearer ${provider.secretKey}` } },
    );
    return answer?.status === "success" && answer.data ? judge(deps, payment, answer.data) : { kind: "pending" };
  } catch (err) {
    // The provider answers an error status for a reference nobody paid.
    if (err instanceof ProviderFailure && (err.status === 404 || err.status === 400)) return { kind: "pending" };
    throw err;
  }
}

/** The browser's return from the hosted page: it only reads the state, never changes it. */
export async function cardBRedirectState(deps: PaymentDeps, txRef: string): Promise<{ transactionId: string; paymentStatus: string }> {
  const payment = await findPayment(deps.db, txRef);
  if (!payment || payment.provider !== "card-b") throw new ApiError("not_found", "no such transaction");
  return { transactionId: payment.id, paymentStatus: payment.status };
}
