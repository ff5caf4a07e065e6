import type { Principal } from "../../auth/principal";
import { ApiError } from "../../errors";
import type { PaymentDeps } from "./context";
import { checkCoins, fxRates, normaliseCurrency } from "./money";
import { ProviderFailure, callProvider, expectCheckoutUrl, expectString } from "./provider-http";
import { cardAConfig } from "./providers";
import { hmacSha256Hex, signatureMatches } from "./signatures";
import { attachProvider, createPending, findPayment, markFailed, settlePayment, type ProviderOutcome, type SettleResult } from "./store";
import { idField, parseObject, stringId } from "./webhook-body";

export interface CardACheckout {
  status: "pending";
  checkoutUrl: string;
  fundingRequestId: string;
  amount: number;
  currency: string;
}

const JSON_API = "application/vnd.api+json";
/** The order events that concern a funding request; the provider sends others too (subscriptions, licences). */
const ORDER_EVENTS = new Set(["order_created", "order_refunded"]);

/**
 * A wallet-funding request and a hosted checkout at the provider (JSON:API `POST /v1/checkouts`)
 * with our price and our funding-request id in the custom data, which the order webhook echoes.
 */
export async function createCardACheckout(deps: PaymentDeps, actor: Principal, input: { amount: number; currency?: string }): Promise<CardACheckout> {
  const provider = cardAConfig(deps.config);
  const currency = normaliseCurrency(input.currency, provider.currency);
  // The provider charges a custom price in the store's currency whatever we call it: another one
  // would be charged as that and then never match its funding request.
  if (currency !== provider.currency) {
    throw new ApiError("invalid_input", `card checkouts are in ${provider.currency}`, { details: [{ path: "currency", message: `must be ${provider.currency}, the store's currency` }] });
  }
  const rate = fxRates(deps.config).get(currency);
  if (rate === undefined) throw new ApiError("invalid_input", `currency ${currency} is not accepted`, { details: [{ path: "currency", message: "not accepted" }] });
  // The amount is in cents: the spec's floor (> 50) applies to it as sent; coins follow the rate.
  if (input.amount <= 50) throw new ApiError("invalid_input", "amount must be greater than 50 cents", { details: [{ path: "amount", message: "greater than 50" }] });
  const coins = Math.floor(Math.round(input.amount * rate * 1e6) / 1e6);
  checkCoins(deps.config, coins);

  const now = deps.clock.now();
  const expiresAt = new Date(now + deps.config.PAYMENT_EXPIRE_AFTER_SECONDS * 1000);
  const row = await createPending(deps, { provider: "card-a", userId: actor.userId, amount: input.amount, currency, coins });
  try {
    const answer = await callProvider<{ data?: { id?: unknown; attributes?: { url?: unknown } } }>(deps, "card-a", `${provider.url}/v1/checkouts`, {
      method: "POST",
      headers: { authorization: `Bearer ${provider.apiKey}`, accept: JSON_API, "content-type": JSON_API },
      json: {
        data: {
          type: "checkouts",
          attributes: {
            custom_price: input.amount,
            // The checkout link dies before reconciliation expires the request.
            expires_at: expiresAt.toISOString(),
            checkout_data: { ...(actor.email ? { email: actor.email } : {}), custom: { funding_request_id: row.id, user_id: actor.userId } },
            // No discount codes: the coins are priced at the full amount.
            checkout_options: { discount: false },
            product_options: { enabled_variants: [Number(provider.variantId) || provider.variantId] },
          },
          relationships: {
            store: { data: { type: "stores", id: provider.storeId } },
            variant: { data: { type: "variants", id: provider.variantId } },
          },
        },
      },
    });
    const checkoutId = expectString("card-a", answer?.data?.id, "checkout id");
    const checkoutUrl = expectCheckoutUrl("card-a", answer?.data?.attributes?.url, "checkout url");
    await attachProvider(deps, row.id, checkoutId, { checkoutUrl });
    return { status: "pending", checkoutUrl, fundingRequestId: row.id, amount: input.amount, currency };
  } catch (err) {
    if (!(err instanceof ProviderFailure)) throw err;
    await markFailed(deps, row.id, `provider_error: ${err.reason}`);
    throw err.toApiError();
  }
}

interface OrderWebhook {
  meta?: { event_name?: unknown; custom_data?: { funding_request_id?: unknown } | null };
  data?: { id?: unknown; type?: unknown; attributes?: { status?: unknown; subtotal?: unknown; discount_total?: unknown; currency?: unknown } };
}

/**
 * The provider's order webhook, signed with HMAC-SHA256 of the raw body (hex, `X-Signature`).
 * Anything but a correctly signed body answers 401 before it is parsed.
 */
export async function handleCardAWebhook(deps: PaymentDeps, rawBody: string, signature: string | undefined): Promise<{ received: true; result: SettleResult | "ignored" }> {
  const provider = cardAConfig(deps.config);
  if (!(await signatureMatches(await hmacSha256Hex(provider.webhookSecret, rawBody), signature))) {
    throw new ApiError("unauthorized", "invalid webhook signature");
  }
  const body = parseObject(rawBody, "webhook body") as OrderWebhook;
  const event = typeof body.meta?.event_name === "string" ? body.meta.event_name : "";
  const fundingId = stringId(body.meta?.custom_data?.funding_request_id, "meta.custom_data.funding_request_id");
  const orderId = idField(body.data?.id, "data.id");
  if (!ORDER_EVENTS.has(event) || fundingId === undefined || orderId === undefined) {
    deps.logger.info("card-a webhook ignored", { event, fundingId });
    return { received: true, result: "ignored" };
  }
  const attrs = body.data?.attributes ?? {};
  const payment = await findPayment(deps.db, fundingId);
  // The signature says the provider sent it, not that its custom data names one of its own
  // checkouts: an order naming another provider's payment, or none, moves nothing (as card-b).
  if (!payment || payment.provider !== "card-a") {
    deps.logger.warn("card-a webhook for an unknown funding request", { fundingId, orderId });
    return { received: true, result: "unknown_payment" };
  }
  let outcome: ProviderOutcome;
  if (event === "order_refunded") {
    // Coins are never taken back automatically: a refund of the credited order goes to a person.
    outcome = { kind: "reversed", reason: `order ${orderId} refunded`, charge: orderId };
  } else if (attrs.status === "paid") {
    // subtotal is the price before any discount: a discounted order paid less than the coins cost.
    const sameMoney =
      Number(attrs.subtotal) === payment.amount && Number(attrs.discount_total ?? 0) === 0 && String(attrs.currency ?? "").toUpperCase() === payment.currency;
    if (!sameMoney) {
      deps.logger.error("card-a order does not match its funding request", { fundingId, subtotal: attrs.subtotal, discountTotal: attrs.discount_total, currency: attrs.currency });
    }
    // A second paid order (the link stays usable until it expires) credits nothing either: the
    // store records it for a person to refund.
    outcome = sameMoney
      ? { kind: "paid", charge: orderId }
      : {
          kind: "uncreditable",
          note: `order ${orderId} of ${String(attrs.subtotal)} ${String(attrs.currency)} with discount ${String(attrs.discount_total ?? 0)}`,
          charge: orderId,
        };
  } else if (attrs.status === "failed") outcome = { kind: "failed", reason: "order failed" };
  else outcome = { kind: "pending" };
  const result = await settlePayment(deps, {
    paymentId: fundingId,
    outcome,
    event: { provider: "card-a", id: `${event}:${orderId}`, kind: event },
  });
  return { received: true, result };
}
