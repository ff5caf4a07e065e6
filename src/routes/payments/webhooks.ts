import { createRoute, z } from "@hono/zod-openapi";
import { createRouter } from "../../http/router";
import { ErrorBody } from "../../http/routes";
import { handleCardAWebhook } from "../../services/payments/card-a";
import { cardBRedirectState, handleCardBWebhook } from "../../services/payments/card-b";
import { paymentDeps } from "../../http/service-context";
import { handleCryptoIpn } from "../../services/payments/crypto";
import { handleStkCallback } from "../../services/payments/mobile-money";

// Provider callbacks carry no bearer token: each is verified by its own signature, shared
// secret or URL token, and reads its raw body itself (a signature covers the exact bytes).
const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const err = (description: string) => json(ErrorBody, description);
/**
 * A provider notification is a few kilobytes. The general 1 MiB limit would let anyone make these
 * unauthenticated routes read, parse and hash (the crypto IPN's signature covers its parsed, key-sorted
 * JSON) far more than a provider ever sends, so they take bodies up to this.
 */
export const WEBHOOK_MAX_BODY_BYTES = 64 * 1024;
export const WEBHOOK_BODY_LIMITS = ["/api/payments/card-a/webhook", "/api/v1/payments/card-b/webhook", "/api/payments/crypto/ipn", "/api/v1/mobile-money/callback/"].map(
  (prefix) => ({ prefix, maxBytes: WEBHOOK_MAX_BODY_BYTES }),
);
const Received = z.object({ received: z.literal(true), result: z.string() }).openapi("WebhookReceived");
const COMMON = {
  400: err("The body is not a JSON object (after its signature, hash or token passed)"),
  401: err("Missing or wrong signature, hash or token"),
  413: err("Body over 64 KiB (`payload_too_large`)"),
  503: err("The provider is not configured"),
} as const;
const webhook = (path: string, summary: string, header?: string) =>
  createRoute({
    method: "post",
    path,
    tags: ["payment webhooks"],
    summary,
    security: [],
    ...(header ? { request: { headers: z.object({ [header]: z.string().optional() }) } } : {}),
    responses: { 200: json(Received, "Accepted (also for a replay, which changes nothing)"), ...COMMON, 502: err("The provider's verification call failed; retry") },
  });

export const paymentWebhookRoutes = createRouter()
  .openapi(webhook("/api/payments/card-a/webhook", "card-a order webhook (X-Signature: HMAC-SHA256 of the body)", "x-signature"), async (c) =>
    c.json(await handleCardAWebhook(paymentDeps(c), await c.req.text(), c.req.header("x-signature")), 200),
  )
  .openapi(webhook("/api/v1/payments/card-b/webhook", "card-b webhook (Verification-Hash; re-verified with the provider)", "verification-hash"), async (c) =>
    c.json(await handleCardBWebhook(paymentDeps(c), await c.req.text(), c.req.header("verification-hash") ?? c.req.header("verif-hash")), 200),
  )
  .openapi(webhook("/api/payments/crypto/ipn", "crypto payment notification (x-nowpayments-sig: HMAC-SHA512 of the key-sorted JSON)", "x-nowpayments-sig"), async (c) =>
    c.json(await handleCryptoIpn(paymentDeps(c), await c.req.text(), c.req.header("x-nowpayments-sig")), 200),
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/api/v1/mobile-money/callback/{token}",
      tags: ["payment webhooks"],
      summary: "Mobile-money STK callback (unsigned: the URL's token finds the request; the status query decides)",
      security: [],
      request: { params: z.object({ token: z.string().max(128) }) },
      responses: {
        200: json(z.object({ ResultCode: z.literal(0), ResultDesc: z.string(), result: z.string() }), "Accepted"),
        ...COMMON,
        400: err("Body is not a JSON object, or does not match the request"),
        502: err("The status query failed; the request stays pending"),
      },
    }),
    async (c) => c.json(await handleStkCallback(paymentDeps(c), c.req.valid("param").token, await c.req.text()), 200),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/api/v1/payments/card-b/redirect",
      tags: ["payment webhooks"],
      summary: "Where card-b sends the browser back: shows the state, never changes it",
      security: [],
      request: { query: z.object({ tx_ref: z.string().max(64), status: z.string().max(32).optional(), transaction_id: z.string().max(64).optional() }) },
      responses: {
        200: json(z.object({ transactionId: z.string(), paymentStatus: z.string(), message: z.string() }), "The transaction's state as we know it"),
        400: err("`tx_ref` missing or too long"),
        404: err("No such transaction"),
      },
    }),
    async (c) => {
      const state = await cardBRedirectState(paymentDeps(c), c.req.valid("query").tx_ref);
      const message =
        state.paymentStatus === "completed" ? "Payment received; your coins are in your wallet." : "Payment is being confirmed; your wallet is credited once the provider confirms it.";
      c.header("Cache-Control", "no-store");
      return c.json({ ...state, message }, 200);
    },
  );
