import type { Principal } from "../../auth/principal";
import { ApiError } from "../../errors";
import type { PaymentDeps } from "./context";
import { coinsFor } from "./money";
import { ProviderFailure, callProvider, expectString } from "./provider-http";
import { cryptoConfig } from "./providers";
import { hmacSha512Hex, signatureMatches, sortKeysDeep } from "./signatures";
import { attachProvider, createPending, findPayment, markFailed, settlePayment, type PaymentRow, type ProviderOutcome, type SettleResult } from "./store";
import { asObject, idField, stringId } from "./webhook-body";

export const CRYPTO_CURRENCIES = ["BTC", "ETH", "LTC", "BCH", "USDC", "USDT"] as const;
export type CryptoCurrency = (typeof CRYPTO_CURRENCIES)[number];

export interface CryptoIntent {
  status: "pending";
  paymentAddress: string;
  amount: number;
  currency: CryptoCurrency;
  reference: string;
  paymentId: string;
  expiresAt: number;
  instructions: string;
}

interface ProviderPayment {
  payment_id?: unknown;
  payment_status?: unknown;
  pay_address?: unknown;
  pay_amount?: unknown;
  actually_paid?: unknown;
  pay_currency?: unknown;
  price_amount?: unknown;
  price_currency?: unknown;
  order_id?: unknown;
}

/**
 * A payment intent at the provider (`POST /v1/payment`): the request's `amount` is the value in US
 * dollars, priced in USD and paid in the chosen coin. The answer's `amount` is what to send, in
 * that coin. The intent lives CRYPTO_INTENT_TTL_SECONDS on our clock.
 */
export async function createCryptoIntent(deps: PaymentDeps, actor: Principal, input: { amount: number; currency: CryptoCurrency }, publicBaseUrl: () => string): Promise<CryptoIntent> {
  const provider = cryptoConfig(deps.config);
  const ipnCallbackUrl = `${publicBaseUrl()}/api/payments/crypto/ipn`;
  const coins = coinsFor(deps.config, input.amount, "USD");
  const now = deps.clock.now();
  const expiresAt = new Date(now + deps.config.CRYPTO_INTENT_TTL_SECONDS * 1000);
  const row = await createPending(deps, {
    provider: "crypto",
    userId: actor.userId,
    amount: input.amount,
    currency: input.currency,
    coins,
    expiresAt,
    details: { priceAmount: input.amount, priceCurrency: "USD" },
  });
  try {
    const answer = await callProvider<ProviderPayment>(deps, "crypto", `${provider.url}/v1/payment`, {
      method: "POST",
      headers: { "x-api-key": provider.apiKey },
      json: {
        price_amount: input.amount,
        price_currency: "usd",
        pay_currency: input.currency.toLowerCase(),
        ipn_callback_url: ipnCallbackUrl,
        order_id: row.id,
        order_description: "Wallet top-up",
      },
    });
    const reference = expectString("crypto", answer?.payment_id, "payment id");
    const paymentAddress = expectString("crypto", answer?.pay_address, "pay address");
    const payAmount = Number(answer?.pay_amount);
    if (!Number.isFinite(payAmount) || payAmount <= 0) throw new ProviderFailure("crypto", "body", "no pay amount in the answer");
    const expiresAtSeconds = Math.floor(expiresAt.getTime() / 1000);
    const instructions =
      `Send exactly ${payAmount} ${input.currency} to ${paymentAddress} before ${expiresAt.toISOString()}. ` +
      `The amount is guaranteed until that time; your wallet is credited with ${coins} coins once the network confirms the payment.`;
    await attachProvider(deps, row.id, reference, { paymentAddress, instructions }, { amount: payAmount });
    return { status: "pending", paymentAddress, amount: payAmount, currency: input.currency, reference, paymentId: row.id, expiresAt: expiresAtSeconds, instructions };
  } catch (err) {
    if (!(err instanceof ProviderFailure)) throw err;
    await markFailed(deps, row.id, `provider_error: ${err.reason}`);
    throw err.toApiError();
  }
}

/** The provider has seen money for these, not yet confirmed (partially_paid: not enough, below). */
const MONEY_ON_THE_WAY = new Set(["confirming", "confirmed", "sending"]);
/** The provider holds money under these. */
const MONEY_TAKEN = new Set(["finished", "partially_paid"]);

/**
 * What the provider's view of the payment means for ours. `finished` at our USD price is money
 * we credit whenever we learn of it, also after expiresAt: the payer paid what the intent
 * quoted. Past expiresAt only an intent nothing was sent to expires (reconcile.ts).
 */
function outcomeOf(payment: PaymentRow, p: ProviderPayment): ProviderOutcome {
  const status = String(p.payment_status);
  if (String(p.payment_id) !== payment.providerRef) {
    // The provider books coins sent to the address again (a repeated deposit) as a payment of its
    // own under our order_id: money we never credit.
    return MONEY_TAKEN.has(status) ? { kind: "uncreditable", note: `crypto payment ${String(p.payment_id)} ${status} under the same order`, charge: String(p.payment_id) } : { kind: "pending" };
  }
  switch (p.payment_status) {
    case "finished": {
      const price = (payment.details as { priceAmount?: number }).priceAmount;
      const samePrice = p.price_amount === undefined || (Number(p.price_amount) === price && String(p.price_currency ?? "usd").toLowerCase() === "usd");
      return samePrice
        ? { kind: "paid", charge: String(p.payment_id) }
        : { kind: "pending", paymentSeen: true, uncreditable: `finished at ${String(p.price_amount)} ${String(p.price_currency ?? "usd")}, not the ${String(price)} usd quoted` };
    }
    case "partially_paid":
      return { kind: "pending", paymentSeen: true, uncreditable: `partially paid (${String(p.actually_paid ?? "?")} of ${String(p.pay_amount ?? "?")} ${String(p.pay_currency ?? "")})` };
    case "refunded":
      return { kind: "reversed", reason: "crypto payment refunded", charge: String(p.payment_id) };
    case "failed":
      return { kind: "failed", reason: `provider status ${status}` };
    case "expired":
      return { kind: "expired", reason: "provider expired the payment" };
    default:
      // waiting (nothing sent yet) and the statuses of money on its way: not yet money we can credit.
      return MONEY_ON_THE_WAY.has(String(p.payment_status)) ? { kind: "pending", paymentSeen: true } : { kind: "pending" };
  }
}

/** A hex HMAC-SHA512, in either case (signatureMatches compares it case-insensitively). */
const SIGNATURE_FORM = /^[0-9a-f]{128}$/i;

/**
 * The provider's payment notification: `x-nowpayments-sig` is HMAC-SHA512 (hex) of the body's JSON
 * with its keys sorted, under CRYPTO_IPN_SECRET. One notification per payment status, so the
 * status is part of the event's id.
 */
export async function handleCryptoIpn(deps: PaymentDeps, rawBody: string, signature: string | undefined): Promise<{ received: true; result: SettleResult | "ignored" }> {
  const provider = cryptoConfig(deps.config);
  // Parsing, key-sorting and hashing the body is the costly part of this unauthenticated route,
  // so a request whose header could never match (absent, or not a hex SHA-512) stops before it.
  if (signature === undefined || !SIGNATURE_FORM.test(signature.trim())) throw new ApiError("unauthorized", "invalid notification signature");
  // The signature covers the parsed JSON, so a body that does not parse cannot carry one.
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody);
  } catch {
    throw new ApiError("unauthorized", "invalid notification signature");
  }
  const signed = sortKeysDeep(parsed);
  if (signed === undefined) throw new ApiError("unauthorized", "invalid notification signature");
  const expected = await hmacSha512Hex(provider.ipnSecret, JSON.stringify(signed));
  if (!(await signatureMatches(expected, signature))) throw new ApiError("unauthorized", "invalid notification signature");
  const body = asObject(parsed, "notification body") as ProviderPayment;
  const orderId = stringId(body.order_id, "order_id");
  const paymentId = idField(body.payment_id, "payment_id");
  const status = stringId(body.payment_status, "payment_status");
  if (orderId === undefined || paymentId === undefined || status === undefined) {
    return { received: true, result: "ignored" };
  }
  const payment = await findPayment(deps.db, orderId);
  // As on card-a: a signed notification whose order_id names another provider's payment, or none,
  // moves nothing.
  if (!payment || payment.provider !== "crypto") {
    deps.logger.warn("crypto notification for an unknown payment", { orderId, paymentId });
    return { received: true, result: "unknown_payment" };
  }
  const result = await settlePayment(deps, {
    paymentId: payment.id,
    outcome: outcomeOf(payment, body),
    event: { provider: "crypto", id: `${paymentId}:${status}`, kind: status },
  });
  return { received: true, result };
}

/** Reconciliation: the provider's current status of the payment (`GET /v1/payment/{id}`). */
export async function recheckCrypto(deps: PaymentDeps, payment: PaymentRow): Promise<ProviderOutcome> {
  const provider = cryptoConfig(deps.config);
  if (!payment.providerRef) return { kind: "pending" };
  const answer = await callProvider<ProviderPayment>(deps, "crypto", `${provider.url}/v1/payment/${encodeURIComponent(payment.providerRef)}`, {
    headers: { "x-api-key": provider.apiKey },
  });
  return outcomeOf(payment, answer ?? {});
}
