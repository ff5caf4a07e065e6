import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError } from "../../errors";
import { principalOf } from "../../http/auth";
import type { AppEnv } from "../../http/env";
import { IdempotencyHeader, idempotent } from "../../http/idempotency";
import { createRouter, jsonBody } from "../../http/router";
import { ErrorBody, protectedRoute } from "../../http/routes";
import { createCardACheckout } from "../../services/payments/card-a";
import { createCardBCheckout } from "../../services/payments/card-b";
import { paymentDeps } from "../../http/service-context";
import { CRYPTO_CURRENCIES, createCryptoIntent } from "../../services/payments/crypto";
import { stkPush } from "../../services/payments/mobile-money";
import { paymentStatus } from "../../services/payments/status";

/** Major units with at most two decimals (cents): a finer amount could never match what the provider reports back. */
const MajorUnits = (max: number, description: string, example: number) =>
  z
    .number()
    .positive()
    .max(max)
    .refine((v) => Number(v.toFixed(2)) === v, "at most two decimal places")
    .openapi({ description, example });
const Currency = z.string().regex(/^[A-Za-z]{3}$/, "an ISO 4217 code").openapi({ example: "USD" });
const CardAInput = z
  .object({ amount: z.number().int().gt(50).max(Number.MAX_SAFE_INTEGER).openapi({ description: "Cents, greater than 50", example: 500 }), currency: Currency.optional() })
  .strict()
  .openapi("CardCheckoutInput");
const CardAResult = z
  .object({ status: z.literal("pending"), checkoutUrl: z.url(), fundingRequestId: z.string(), amount: z.number().int(), currency: z.string() })
  .openapi("CardCheckoutResult");
const CardBInput = z
  .object({
    amount: MajorUnits(1e12, "Major units of the currency, at most two decimals", 25),
    phoneNumber: z.string().trim().min(5).max(32),
    // zod 4 prefers z.email(), but z.email().trim() checks the address before trimming it, and a
    // trim-then-email pipe drops the format from the OpenAPI document; so the older form stays.
    email: z.string().trim().email().max(254),
    currency: Currency.optional(),
  })
  .strict()
  .openapi("CardCollectionInput");
const CardBResult = z
  .object({ status: z.literal("pending"), checkoutUrl: z.url(), sessionId: z.string(), transactionId: z.string(), currency: z.string() })
  .openapi("CardCollectionResult");
const CryptoInput = z
  .object({ amount: MajorUnits(1e9, "Value in US dollars, at most two decimals", 25), currency: z.enum(CRYPTO_CURRENCIES) })
  .strict()
  .openapi("CryptoIntentInput");
const CryptoResult = z
  .object({
    status: z.literal("pending"),
    paymentAddress: z.string(),
    amount: z.number().openapi({ description: "What to send, in `currency`" }),
    currency: z.enum(CRYPTO_CURRENCIES),
    reference: z.string().openapi({ description: "The provider's payment id" }),
    paymentId: z.string(),
    expiresAt: z.number().int().openapi({ description: "Unix seconds" }),
    instructions: z.string(),
  })
  .openapi("CryptoIntent");
const StkInput = z
  .object({ phoneNumber: z.string().max(32).openapi({ example: "0712345678" }), amount: z.number().int().positive().max(1e9).openapi({ description: "Whole shillings (KES)" }) })
  .strict()
  .openapi("StkPushInput");
const StkResult = z
  .object({
    success: z.literal(true),
    requestId: z.string(),
    checkoutRequestId: z.string(),
    merchantRequestId: z.string(),
    message: z.string(),
    amount: z.number(),
    currency: z.string(),
  })
  .openapi("StkPushResult");
const StatusResult = z
  .object({
    status: z.literal("success"),
    paymentId: z.string(),
    paymentStatus: z.enum(["pending", "completed", "failed", "expired"]),
    amount: z.number(),
    currency: z.string(),
    provider: z.enum(["card-a", "card-b", "crypto", "mobile-money"]),
    timestamp: z.number().int().openapi({ description: "Unix seconds of the last change" }),
  })
  .openapi("PaymentStatus");

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const err = (description: string) => json(ErrorBody, description);
const PROVIDER_ERRORS = {
  409: err("Idempotency-Key reused with another body, or still in flight"),
  502: err("The provider failed or timed out (provider_error); the payment is recorded as failed, or pending when it may still complete"),
  503: err("The provider is not configured (service_unavailable, naming it)"),
} as const;

/**
 * Where providers reach this API from outside: PAYMENTS_PUBLIC_URL. The request's own origin (its
 * Host, chosen by the caller) only outside production, where the configuration requires the URL
 * whenever a provider that calls back is configured; read only once that provider's settings are.
 */
export function publicBaseUrl(c: Context<AppEnv>): () => string {
  return () => {
    const { PAYMENTS_PUBLIC_URL: configured, NODE_ENV } = c.var.deps.config;
    if (configured === undefined && NODE_ENV === "production") throw new ApiError("service_unavailable", "payment callbacks are not configured (PAYMENTS_PUBLIC_URL)");
    return (configured ?? new URL(c.req.url).origin).replace(/\/+$/, "");
  };
}

export const paymentRoutes = createRouter()
  .openapi(
    protectedRoute("user", {
      method: "post",
      path: "/api/payments/card-a/checkout",
      tags: ["payments"],
      summary: "Fund the wallet by card: a hosted checkout (card-a)",
      middleware: [idempotent],
      request: { headers: IdempotencyHeader, body: jsonBody(CardAInput) },
      responses: { 201: json(CardAResult, "Checkout created; the funding request is pending"), ...PROVIDER_ERRORS },
    }),
    async (c) => c.json(await createCardACheckout(paymentDeps(c), principalOf(c), c.req.valid("json")), 201),
  )
  .openapi(
    protectedRoute("user", {
      method: "post",
      path: "/api/v1/payments/card-b/card-collection",
      tags: ["payments"],
      summary: "Fund the wallet by card: a hosted card collection (card-b)",
      middleware: [idempotent],
      request: { headers: IdempotencyHeader, body: jsonBody(CardBInput) },
      responses: { 201: json(CardBResult, "Checkout created; the transaction is pending"), ...PROVIDER_ERRORS },
    }),
    async (c) => c.json(await createCardBCheckout(paymentDeps(c), principalOf(c), c.req.valid("json"), publicBaseUrl(c)), 201),
  )
  .openapi(
    protectedRoute("user", {
      method: "post",
      path: "/api/payments/crypto/create",
      tags: ["payments"],
      summary: "Fund the wallet in crypto: a payment intent",
      middleware: [idempotent],
      request: { headers: IdempotencyHeader, body: jsonBody(CryptoInput) },
      responses: { 201: json(CryptoResult, "Intent created; send the amount before expiresAt"), ...PROVIDER_ERRORS },
    }),
    async (c) => c.json(await createCryptoIntent(paymentDeps(c), principalOf(c), c.req.valid("json"), publicBaseUrl(c)), 201),
  )
  .openapi(
    protectedRoute("user", {
      method: "post",
      path: "/api/v1/mobile-money/stk-push",
      tags: ["payments"],
      summary: "Fund the wallet by mobile money: a push to the payer's phone",
      middleware: [idempotent],
      request: { headers: IdempotencyHeader, body: jsonBody(StkInput) },
      responses: { 201: json(StkResult, "Push sent; the request is pending"), ...PROVIDER_ERRORS },
    }),
    async (c) => c.json(await stkPush(paymentDeps(c), principalOf(c), c.req.valid("json")), 201),
  )
  .openapi(
    protectedRoute("user", {
      method: "get",
      path: "/api/payments/{paymentId}/status",
      tags: ["payments"],
      summary: "A payment's state, by any id returned for it",
      request: { params: z.object({ paymentId: z.string().max(64) }) },
      responses: { 200: json(StatusResult, "The payment"), 404: err("No such payment, or not yours") },
    }),
    async (c) => c.json(await paymentStatus(c.var.db, principalOf(c), c.req.valid("param").paymentId), 200),
  );
