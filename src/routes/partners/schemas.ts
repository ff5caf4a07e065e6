import { z } from "@hono/zod-openapi";
import { OUTBOX_KINDS, PARTNER_EVENT_KINDS } from "../../services/outbox/catalogue";

const text = (max: number) => z.string().trim().min(1).max(max);

export const CompanyFields = {
  companyName: text(200),
  contactName: text(200),
  contactEmail: z.email().max(254),
  website: z.url({ protocol: /^https?$/ }).max(2048).nullable().optional(),
  description: text(5000),
  businessType: text(100).openapi({ example: "venue" }),
  country: z.string().regex(/^[A-Z]{2}$/).openapi({ description: "ISO 3166-1 alpha-2, upper case", example: "KE" }),
};

export const ApplyInput = z.object(CompanyFields).strict().openapi("PartnerApplication");

const EventKind = z.enum(PARTNER_EVENT_KINDS as [string, ...string[]]).openapi({ description: Object.entries(OUTBOX_KINDS).filter(([k]) => k.startsWith("partner.")).map(([k, v]) => `${k}: ${v.description}`).join(" ") });

export const WebhookInput = z
  .object({
    url: z.string().max(2048).openapi({ description: "https:// (plain http:// only outside production) on a public host", example: "https://hooks.example.com/dating" }),
    events: z.array(EventKind).max(PARTNER_EVENT_KINDS.length).optional().openapi({ description: "Defaults to every partner event when the webhook is first set" }),
    enabled: z.boolean().optional().openapi({ description: "Defaults to true" }),
  })
  .strict();

export const ProfileUpdate = z
  .object({ ...Object.fromEntries(Object.entries(CompanyFields).map(([k, v]) => [k, v.optional()])), webhook: WebhookInput.optional() })
  .strict()
  .openapi("PartnerProfileUpdate");

export const PartnerProfile = z
  .object({
    partnerId: z.string(),
    userId: z.string(),
    status: z.enum(["pending_review", "approved", "rejected"]),
    companyName: z.string(),
    contactName: z.string(),
    contactEmail: z.string(),
    website: z.string().nullable(),
    description: z.string(),
    businessType: z.string(),
    country: z.string(),
    rejectionReason: z.string().nullable(),
    reviewedAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    webhook: z.object({
      url: z.string().nullable(),
      events: z.array(z.string()),
      enabled: z.boolean(),
      disabledReason: z.string().nullable().openapi({ description: "Why the platform turned the endpoint off (410 Gone, five days of failures)" }),
      disabledAt: z.string().nullable(),
      secret: z.string().optional().openapi({ description: "`whsec_…`, only in the answer that created it" }),
    }),
  })
  .openapi("PartnerProfile");

export const AdminPartner = PartnerProfile.extend({ reviewedBy: z.string().nullable() }).openapi("AdminPartner");

export const Delivery = z
  .object({
    deliveryId: z.string().openapi({ description: "The `webhook-id` of every attempt" }),
    event: z.string(),
    status: z.enum(["pending", "delivered", "failed"]),
    createdAt: z.string(),
    deliveredAt: z.string().nullable(),
    nextAttemptAt: z.string().nullable(),
    lastError: z.string().nullable(),
    attempts: z.array(
      z.object({
        at: z.string(),
        outcome: z.enum(["delivered", "failed"]),
        statusCode: z.number().int().nullable(),
        latencyMs: z.number().int().nullable(),
        error: z.string().nullable(),
      }),
    ),
  })
  .openapi("PartnerDelivery");

export const Page = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(64).optional(),
});

const id = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9a-z]{26}$`)).openapi({ example: `${prefix}_01jd0000000000000000000000` });
export const PartnerIdParam = z.object({ partnerId: id("ptn") });
export const DeliveryIdParam = z.object({ deliveryId: id("msg") });
