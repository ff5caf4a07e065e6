import type { Principal } from "../../auth/principal";
import { ApiError } from "../../errors";
import { sha256Hex, toHex } from "../../platform/hash";
import type { PaymentDeps } from "./context";
import { coinsFor, fxRates } from "./money";
import { ProviderFailure, callProvider, expectString } from "./provider-http";
import { mobileMoneyConfig, type MobileMoneyConfig } from "./providers";
import { attachProvider, createPending, findByCallbackToken, markFailed, settlePayment, type PaymentRow, type ProviderOutcome, type SettleResult } from "./store";
import { parseObject, stringId } from "./webhook-body";

export const MOBILE_MONEY_CURRENCY = "KES";
const TOKEN_KEY_PREFIX = "payments:mobile-money:oauth:";
/** The token is dropped this long before the provider says it expires, so a call never carries a dying one. */
const TOKEN_MARGIN_MS = 60_000;

export interface StkPushResult {
  success: true;
  requestId: string;
  checkoutRequestId: string;
  merchantRequestId: string;
  message: string;
  amount: number;
  currency: string;
}

/** 07XXXXXXXX, +2547XXXXXXXX and 2547XXXXXXXX all become 2547XXXXXXXX; anything else is refused. */
export function normalisePhone(raw: string): string {
  const compact = raw.replace(/[\s-]/g, "");
  const match = /^(?:\+?254|0)(7\d{8})$/.exec(compact);
  if (!match) throw new ApiError("invalid_input", "phoneNumber must be a Kenyan mobile number (07…, +2547… or 2547…)", { details: [{ path: "phoneNumber", message: "07XXXXXXXX, +2547XXXXXXXX or 2547XXXXXXXX" }] });
  return `254${match[1]}`;
}

/** YYYYMMDDHHmmss in East Africa Time (UTC+3, no daylight saving), as the provider expects. */
export function providerTimestamp(nowMs: number): string {
  const d = new Date(nowMs + 3 * 3_600_000);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`;
}

export function stkPassword(shortcode: string, passkey: string, timestamp: string): string {
  return btoa(`${shortcode}${passkey}${timestamp}`);
}

/**
 * Where the token is cached: under a hash of the consumer key, so that a token of credentials
 * since rotated, or of another app sharing the store, is never sent with these.
 */
export async function tokenCacheKey(provider: MobileMoneyConfig): Promise<string> {
  return `${TOKEN_KEY_PREFIX}${(await sha256Hex(provider.consumerKey)).slice(0, 32)}`;
}

/**
 * The OAuth client-credentials token, kept in the key-value store until shortly before it expires,
 * so every instance sharing the store asks the provider once per token lifetime. `fresh` skips the
 * cache (the provider refused the cached one).
 */
export async function accessToken(deps: PaymentDeps, provider: MobileMoneyConfig, options: { fresh?: boolean } = {}): Promise<string> {
  const key = await tokenCacheKey(provider);
  const cached = options.fresh ? null : await deps.kv.get(key).catch(() => null);
  if (cached) return cached;
  const answer = await callProvider<{ access_token?: unknown; expires_in?: unknown }>(deps, "mobile-money", `${provider.url}/oauth/v1/generate?grant_type=client_credentials`, {
    headers: { authorization: `Basic ${btoa(`${provider.consumerKey}:${provider.consumerSecret}`)}` },
  });
  const token = expectString("mobile-money", answer?.access_token, "access token");
  // Whole milliseconds: the store (as Redis) refuses a fractional expiry, and the token would go uncached.
  const lifetimeMs = Math.floor((Number(answer?.expires_in) || 3599) * 1000) - TOKEN_MARGIN_MS;
  if (lifetimeMs > 0) await deps.kv.set(key, token, { ttlMs: lifetimeMs }).catch(() => undefined);
  return token;
}

/** The provider answered 401: it no longer takes the token (revoked, or credentials rotated before it expired). */
function tokenRefused(err: unknown): boolean {
  return err instanceof ProviderFailure && err.reason === "status" && err.status === 401;
}

/**
 * After a 401 the cached token is dropped, so no other call carries it either, and a new one is
 * asked for; the caller tries once more with it (a second 401 is the provider's answer).
 */
async function renewedToken(deps: PaymentDeps, provider: MobileMoneyConfig): Promise<string> {
  await deps.kv.del(await tokenCacheKey(provider)).catch(() => undefined);
  return accessToken(deps, provider, { fresh: true });
}

/**
 * An STK push: the payer's phone asks them to approve the amount. The callback URL carries a
 * random per-request token, because the provider does not sign its callbacks.
 */
export async function stkPush(deps: PaymentDeps, actor: Principal, input: { phoneNumber: string; amount: number }): Promise<StkPushResult> {
  const provider = mobileMoneyConfig(deps.config);
  if (!fxRates(deps.config).has(MOBILE_MONEY_CURRENCY)) throw new ApiError("service_unavailable", "mobile-money payments are not configured (no KES rate in PAYMENT_FX_RATES)");
  const phone = normalisePhone(input.phoneNumber);
  if (!Number.isSafeInteger(input.amount) || input.amount < 1) {
    throw new ApiError("invalid_input", "amount must be a whole number of shillings", { details: [{ path: "amount", message: "positive integer" }] });
  }
  const coins = coinsFor(deps.config, input.amount, MOBILE_MONEY_CURRENCY);
  // Before the record: a failed token call has sent nothing, so there is nothing to keep pending.
  const token = await accessToken(deps, provider).catch((err: unknown) => {
    throw err instanceof ProviderFailure ? err.toApiError() : err;
  });
  const callbackToken = toHex(deps.random.bytes(32));
  const row = await createPending(deps, { provider: "mobile-money", userId: actor.userId, amount: input.amount, currency: MOBILE_MONEY_CURRENCY, coins, callbackToken, details: { phoneNumber: phone } });
  // Whether a push is out that the provider may have acted on; one it refused with 401 is not.
  let pushOut = false;
  const push = (bearer: string) => {
    pushOut = true;
    const timestamp = providerTimestamp(deps.clock.now());
    return callProvider<{ MerchantRequestID?: unknown; CheckoutRequestID?: unknown; ResponseCode?: unknown; CustomerMessage?: unknown; ResponseDescription?: unknown }>(
      deps,
      "mobile-money",
      `${provider.url}/mpesa/stkpush/v1/processrequest`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${bearer}` },
        json: {
          BusinessShortCode: provider.shortcode,
          Password: stkPassword(provider.shortcode, provider.passkey, timestamp),
          Timestamp: timestamp,
          TransactionType: "CustomerPayBillOnline",
          Amount: input.amount,
          PartyA: phone,
          PartyB: provider.shortcode,
          PhoneNumber: phone,
          CallBackURL: `${provider.callbackUrl}/${callbackToken}`,
          AccountReference: row.id.slice(-12),
          TransactionDesc: "Wallet top-up",
        },
      },
    );
  };
  try {
    const answer = await push(token).catch(async (err: unknown) => {
      if (!tokenRefused(err)) throw err;
      // Refused before it was acted on: the one push sent with a new token cannot ring the phone twice.
      pushOut = false;
      return push(await renewedToken(deps, provider));
    });
    if (String(answer?.ResponseCode) !== "0") throw new ProviderFailure("mobile-money", "body", `push refused (${String(answer?.ResponseCode)})`);
    const checkoutRequestId = expectString("mobile-money", answer?.CheckoutRequestID, "CheckoutRequestID");
    const merchantRequestId = expectString("mobile-money", answer?.MerchantRequestID, "MerchantRequestID");
    const message = typeof answer?.CustomerMessage === "string" ? answer.CustomerMessage : "Check your phone to approve the payment";
    await attachProvider(deps, row.id, checkoutRequestId, { merchantRequestId });
    return { success: true, requestId: row.id, checkoutRequestId, merchantRequestId, message, amount: input.amount, currency: MOBILE_MONEY_CURRENCY };
  } catch (err) {
    if (!(err instanceof ProviderFailure)) throw err;
    // The push may have reached the phone even though we saw no answer, so the request stays
    // pending: its callback (found by token) or reconciliation settles it.
    if (!err.outcomeUnknown || !pushOut) {
      await markFailed(deps, row.id, `provider_error: ${err.reason}`);
      throw err.toApiError();
    }
    throw err.toApiError({ paymentId: row.id, what: "the push may still reach the phone" });
  }
}

/** The STK status query: ResultCode 0 is paid, any other code failed, an error answer still running. */
async function queryStatus(deps: PaymentDeps, provider: MobileMoneyConfig, checkoutRequestId: string): Promise<ProviderOutcome> {
  const query = (bearer: string) => {
    const timestamp = providerTimestamp(deps.clock.now());
    return callProvider<{ ResponseCode?: unknown; ResultCode?: unknown; ResultDesc?: unknown; CheckoutRequestID?: unknown }>(
      deps,
      "mobile-money",
      `${provider.url}/mpesa/stkpushquery/v1/query`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${bearer}` },
        json: { BusinessShortCode: provider.shortcode, Password: stkPassword(provider.shortcode, provider.passkey, timestamp), Timestamp: timestamp, CheckoutRequestID: checkoutRequestId },
      },
    );
  };
  const token = await accessToken(deps, provider);
  try {
    const answer = await query(token).catch(async (err: unknown) => {
      if (!tokenRefused(err)) throw err;
      return query(await renewedToken(deps, provider));
    });
    if (String(answer?.ResponseCode) !== "0" || answer?.ResultCode === undefined) return { kind: "pending" };
    return String(answer.ResultCode) === "0" ? { kind: "paid", charge: checkoutRequestId } : { kind: "failed", reason: `result ${String(answer.ResultCode)}: ${String(answer.ResultDesc ?? "")}` };
  } catch (err) {
    // "The transaction is being processed" comes back as an error answer.
    if (err instanceof ProviderFailure && err.reason === "status") {
      const code = (err.body as { errorCode?: unknown } | null)?.errorCode;
      if (typeof code === "string" && code.startsWith("500.001")) return { kind: "pending" };
    }
    throw err;
  }
}

interface StkCallback {
  Body?: { stkCallback?: { MerchantRequestID?: unknown; CheckoutRequestID?: unknown; ResultCode?: unknown; ResultDesc?: unknown } };
}

/**
 * The provider's callback, unsigned: the token in its URL finds the request (an unknown token is
 * refused), and the outcome is taken from the status query, never from the callback's body.
 */
export async function handleStkCallback(deps: PaymentDeps, token: string, rawBody: string): Promise<{ ResultCode: 0; ResultDesc: string; result: SettleResult }> {
  const provider = mobileMoneyConfig(deps.config);
  const payment = /^[0-9a-f]{64}$/.test(token) ? await findByCallbackToken(deps.db, token) : undefined;
  if (!payment) throw new ApiError("unauthorized", "unknown callback token");
  const body = parseObject(rawBody, "callback body") as StkCallback;
  const checkoutRequestId = stringId(body.Body?.stkCallback?.CheckoutRequestID, "Body.stkCallback.CheckoutRequestID");
  if (checkoutRequestId === undefined || (payment.providerRef !== null && payment.providerRef !== checkoutRequestId)) {
    throw new ApiError("invalid_input", "callback does not match its request");
  }
  let outcome: ProviderOutcome;
  try {
    outcome = await queryStatus(deps, provider, checkoutRequestId);
  } catch (err) {
    if (err instanceof ProviderFailure) throw err.toApiError();
    throw err;
  }
  const result = await settlePayment(deps, {
    paymentId: payment.id,
    outcome,
    // Still running at the provider: not recorded, so a later callback or reconciliation decides.
    event: outcome.kind === "pending" ? undefined : { provider: "mobile-money", id: checkoutRequestId, kind: "stk_callback" },
    providerRef: checkoutRequestId,
  });
  return { ResultCode: 0, ResultDesc: "Accepted", result };
}

export async function recheckMobileMoney(deps: PaymentDeps, payment: PaymentRow): Promise<ProviderOutcome> {
  if (!payment.providerRef) return { kind: "pending" };
  return queryStatus(deps, mobileMoneyConfig(deps.config), payment.providerRef);
}
