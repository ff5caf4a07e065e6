import { z } from "zod";

/**
 * How a message leaves the platform; each channel has one sender in the outbox worker: `webhook`
 * to a partner's endpoint, `engine` to the automation engine's production webhook of a workflow.
 */
export type Channel = "webhook" | "engine";

interface KindSpec {
  channel: Channel;
  description: string;
  data: z.ZodType;
  example: Record<string, unknown>;
}

const partnerId = z.string();

/**
 * Every kind of message the outbox sends, in one place: adding a kind is one entry here (its
 * channel, the shape of its `data`, and an example for the documentation). Enqueueing checks
 * `data` against the entry, so no message leaves in a shape that is not documented.
 */
export const OUTBOX_KINDS = {
  "partner.application.approved": {
    channel: "webhook",
    description: "An admin approved the partner's application.",
    data: z.object({ partnerId, status: z.literal("approved"), reviewedAt: z.string() }),
    example: { partnerId: "ptn_01JD0000000000000000000000", status: "approved", reviewedAt: "2026-11-27T10:00:00.000Z" },
  },
  "partner.application.rejected": {
    channel: "webhook",
    description: "An admin rejected the partner's application; `reason` is the admin's explanation.",
    data: z.object({ partnerId, status: z.literal("rejected"), reason: z.string(), reviewedAt: z.string() }),
    example: { partnerId: "ptn_01JD0000000000000000000000", status: "rejected", reason: "Website does not match the company name", reviewedAt: "2026-11-27T10:00:00.000Z" },
  },
  "partner.profile.updated": {
    channel: "webhook",
    description: "The partner profile changed; `changed` names the fields (the webhook secret is never among them).",
    data: z.object({ partnerId, changed: z.array(z.string()) }),
    example: { partnerId: "ptn_01JD0000000000000000000000", changed: ["companyName", "webhook.events"] },
  },
  "partner.webhook.test": {
    channel: "webhook",
    description: "Sent on request (`POST /api/v1/partner/webhook/test`) to check an endpoint; delivered whatever the endpoint subscribes to.",
    data: z.object({ partnerId, message: z.string() }),
    example: { partnerId: "ptn_01JD0000000000000000000000", message: "This is a test event." },
  },
  "workflow.run": {
    channel: "engine",
    description: "A messaging workflow run handed to the automation engine's webhook of the workflow (the body is `data`).",
    data: z.object({
      runId: z.string(),
      workflowId: z.string(),
      input: z.record(z.string(), z.unknown()),
      statusUrl: z.string(),
      callbackToken: z.string(),
    }),
    example: {
      runId: "wfr_01JD0000000000000000000000",
      workflowId: "wfl_01JD0000000000000000000000",
      input: { userId: "usr_01JD0000000000000000000000", displayName: "Amina" },
      statusUrl: "https://api.example.com/api/v1/messaging/workflows/status",
      callbackToken: "…",
    },
  },
} as const satisfies Record<string, KindSpec>;

export type OutboxKind = keyof typeof OUTBOX_KINDS;
export type KindData<K extends OutboxKind> = z.infer<(typeof OUTBOX_KINDS)[K]["data"]>;

export const OUTBOX_KIND_NAMES = Object.keys(OUTBOX_KINDS) as [OutboxKind, ...OutboxKind[]];

/** The kinds a partner's webhook may subscribe to (the test event is always delivered). */
export const PARTNER_EVENT_KINDS = OUTBOX_KIND_NAMES.filter((k) => k.startsWith("partner.") && k !== "partner.webhook.test") as OutboxKind[];

export function isOutboxKind(value: string): value is OutboxKind {
  return Object.hasOwn(OUTBOX_KINDS, value);
}
