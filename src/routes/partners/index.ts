import { z } from "@hono/zod-openapi";
import { principalOf } from "../../http/auth";
import { createRouter, jsonBody } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { applyAsPartner, getOwnProfile, rotateWebhookSecret, sendTestEvent, updateOwnProfile, type ProfileUpdate as ProfileUpdateInput } from "../../services/partners/profile";
import { listDeliveries, replayDelivery } from "../../services/partners/deliveries";
import { partnerContext } from "./context";
import { ApplyInput, Delivery, DeliveryIdParam, Page, PartnerProfile, ProfileUpdate } from "./schemas";

const ok = (description: string, schema: z.ZodType) => ({ description, content: { "application/json": { schema } } });
const NOT_APPLIED = { description: "The caller has not applied as a partner" };

export const partnerRoutes = createRouter()
  .openapi(
    protectedRoute("user", {
      method: "post",
      path: "/api/v1/partners/apply",
      tags: ["partners"],
      summary: "Apply as a partner; the profile exists at once in review",
      request: { body: jsonBody(ApplyInput) },
      responses: { 201: ok("The new partner profile, status pending_review", PartnerProfile), 409: { description: "The caller has already applied" } },
    }),
    async (c) => c.json(await applyAsPartner(partnerContext(c), principalOf(c), c.req.valid("json")), 201),
  )
  .openapi(
    protectedRoute("user", {
      method: "get",
      path: "/api/v1/partner/profile",
      tags: ["partners"],
      summary: "The caller's partner profile and webhook configuration",
      responses: { 200: ok("The profile (never the webhook secret)", PartnerProfile), 404: NOT_APPLIED },
    }),
    async (c) => c.json(await getOwnProfile(partnerContext(c), principalOf(c)), 200),
  )
  .openapi(
    protectedRoute("user", {
      method: "put",
      path: "/api/v1/partner/profile",
      tags: ["partners"],
      summary: "Update company fields and the webhook; fields not sent keep their value",
      request: { body: jsonBody(ProfileUpdate) },
      responses: {
        200: ok("The profile; `webhook.secret` appears once, when the webhook is first set", PartnerProfile),
        404: NOT_APPLIED,
      },
    }),
    async (c) => c.json(await updateOwnProfile(partnerContext(c), principalOf(c), c.req.valid("json") as ProfileUpdateInput), 200),
  )
  .openapi(
    protectedRoute("user", {
      method: "post",
      path: "/api/v1/partner/webhook/rotate-secret",
      tags: ["partners"],
      summary: "A new signing secret, shown once; the old one keeps signing for 24 hours",
      responses: {
        200: ok("The new secret", z.object({ secret: z.string(), previousSecretExpiresAt: z.string().nullable() }).openapi("RotatedWebhookSecret")),
        404: NOT_APPLIED,
        409: { description: "No webhook is set yet" },
      },
    }),
    async (c) => c.json(await rotateWebhookSecret(partnerContext(c), principalOf(c)), 200),
  )
  .openapi(
    protectedRoute("user", {
      method: "post",
      path: "/api/v1/partner/webhook/test",
      tags: ["partners"],
      summary: "Queue a partner.webhook.test event to the caller's endpoint",
      responses: {
        202: ok("Queued; follow it in the delivery log", z.object({ deliveryId: z.string() })),
        404: NOT_APPLIED,
        409: { description: "No webhook is set, or it is disabled" },
      },
    }),
    async (c) => c.json(await sendTestEvent(partnerContext(c), principalOf(c)), 202),
  )
  .openapi(
    protectedRoute("user", {
      method: "get",
      path: "/api/v1/partner/deliveries",
      tags: ["partners"],
      summary: "The caller's webhook deliveries, newest first, with every attempt",
      request: { query: Page },
      responses: { 200: ok("A page of deliveries", z.object({ deliveries: z.array(Delivery), nextCursor: z.string().nullable() })), 404: NOT_APPLIED },
    }),
    async (c) => c.json(await listDeliveries(partnerContext(c), principalOf(c), c.req.valid("query")), 200),
  )
  .openapi(
    protectedRoute("user", {
      method: "post",
      path: "/api/v1/partner/deliveries/{deliveryId}/replay",
      tags: ["partners"],
      summary: "Send a delivery again now, under the same webhook-id",
      request: { params: DeliveryIdParam },
      responses: {
        202: ok("Queued", z.object({ deliveryId: z.string(), status: z.literal("pending"), nextAttemptAt: z.string() })),
        404: { description: "No such delivery of the caller's" },
        409: { description: "The webhook is disabled" },
      },
    }),
    async (c) => c.json(await replayDelivery(partnerContext(c), principalOf(c), c.req.valid("param").deliveryId), 202),
  );
