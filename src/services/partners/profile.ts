import { eq } from "drizzle-orm";
import type { Db } from "../../db/port";
import { partners } from "../../db/tables/partners";
import { ApiError } from "../../errors";
import type { Principal } from "../../auth/principal";
import type { IdGenerator, Random } from "../../platform/ids";
import { assertPublicUrl, type HostResolver } from "../kb/url-fetch";
import type { Tx } from "../wallet/ledger";
import { PARTNER_EVENT_KINDS, type OutboxKind } from "../outbox/catalogue";
import { withOutbox, type OutboxDispatch } from "../outbox/dispatch";
import { enqueue, type Enqueue } from "../outbox/enqueue";
import { newWebhookSecret } from "../outbox/signing";

export interface PartnerContext {
  db: Db;
  ids: IdGenerator;
  random: Random;
  now: number;
  requestId: string;
  /** The public-only guard's name resolution (the one KB asset fetching uses). */
  resolver: HostResolver;
  /** Test-only hosts let through although they resolve to a private address. */
  allowedHosts?: readonly string[];
  /** Plain http:// endpoints are refused in production. */
  production: boolean;
  /** Told the ids of the outbox messages a change enqueued, after it commits. */
  dispatch?: OutboxDispatch;
}

export type PartnerRow = typeof partners.$inferSelect;

/** After a rotation the old secret keeps signing this long, beside the new one. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

export interface CompanyFields {
  companyName: string;
  contactName: string;
  contactEmail: string;
  website?: string | null;
  description: string;
  businessType: string;
  country: string;
}

export interface PartnerProfile extends Omit<CompanyFields, "website"> {
  partnerId: string;
  userId: string;
  status: "pending_review" | "approved" | "rejected";
  website: string | null;
  rejectionReason: string | null;
  reviewedAt: string | null;
  createdAt: string;
  updatedAt: string;
  webhook: {
    url: string | null;
    events: string[];
    enabled: boolean;
    /** Why the platform turned the endpoint off (410 Gone, five days of failures); null otherwise. */
    disabledReason: string | null;
    disabledAt: string | null;
    /** Present only in the answer that created it (first webhook, rotation). */
    secret?: string;
  };
}

export function profileOf(row: PartnerRow, secret?: string): PartnerProfile {
  return {
    partnerId: row.id,
    userId: row.userId,
    status: row.status as PartnerProfile["status"],
    companyName: row.companyName,
    contactName: row.contactName,
    contactEmail: row.contactEmail,
    website: row.website,
    description: row.description,
    businessType: row.businessType,
    country: row.country,
    rejectionReason: row.rejectionReason,
    reviewedAt: row.reviewedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    webhook: {
      url: row.webhookUrl,
      events: row.webhookEvents,
      enabled: row.webhookEnabled,
      disabledReason: row.webhookDisabledReason,
      disabledAt: row.webhookDisabledAt?.toISOString() ?? null,
      ...(secret ? { secret } : {}),
    },
  };
}

/** Applies: the profile exists at once, in review. One per member; a second application is 409. */
export async function applyAsPartner(ctx: PartnerContext, actor: Principal, input: CompanyFields): Promise<PartnerProfile> {
  const at = new Date(ctx.now);
  const [row] = await ctx.db
    .insert(partners)
    .values({ id: ctx.ids.next("ptn"), userId: actor.userId, ...input, website: input.website ?? null, status: "pending_review", createdAt: at, updatedAt: at })
    .onConflictDoNothing({ target: partners.userId })
    .returning();
  if (!row) throw new ApiError("conflict", "you have already applied as a partner");
  return profileOf(row);
}

async function ownRow(db: Db | Tx, userId: string, lock = false): Promise<PartnerRow> {
  const query = db.select().from(partners).where(eq(partners.userId, userId));
  const [row] = lock ? await query.for("update") : await query;
  if (!row) throw new ApiError("not_found", "you have not applied as a partner");
  return row;
}

export async function getOwnProfile(ctx: PartnerContext, actor: Principal): Promise<PartnerProfile> {
  return profileOf(await ownRow(ctx.db, actor.userId));
}

export interface WebhookInput {
  url: string;
  events?: string[];
  enabled?: boolean;
}

export type ProfileUpdate = Partial<CompanyFields> & { webhook?: WebhookInput };

/** The public-only check of an endpoint, on every write; the worker checks again at each delivery. */
export async function assertWebhookUrl(ctx: Pick<PartnerContext, "resolver" | "allowedHosts" | "production">, raw: string, path = "webhook.url"): Promise<void> {
  const bad = (message: string) => new ApiError("invalid_input", `${message}: ${raw.slice(0, 200)}`, { details: [{ path, message: `${message}: ${raw.slice(0, 200)}` }] });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad("not a valid URL");
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && !ctx.production)) throw bad(ctx.production ? "the webhook URL must use https" : "the webhook URL must use https (or http outside production)");
  try {
    await assertPublicUrl(raw, ctx);
  } catch (err) {
    if (err instanceof ApiError) throw bad(err.message);
    throw err;
  }
}

/**
 * Enqueues a partner event if the partner's endpoint is on and subscribes to it (the test event
 * goes to any configured endpoint). Inside the caller's transaction, so the event exists exactly
 * when the change does.
 */
export async function enqueueForPartner<K extends OutboxKind>(tx: Tx, ctx: { ids: IdGenerator; now: number }, row: PartnerRow, message: Omit<Enqueue<K>, "targetId">): Promise<string | null> {
  if (!row.webhookUrl || !row.webhookEnabled) return null;
  if (message.kind !== "partner.webhook.test" && !row.webhookEvents.includes(message.kind)) return null;
  return enqueue(tx, ctx, { ...message, targetId: row.id } as Enqueue<K>);
}

/** An enqueued id as a list: empty when nothing was enqueued. */
export const nonNull = (id: string | null): string[] => (id === null ? [] : [id]);

const COMPANY_KEYS = ["companyName", "contactName", "contactEmail", "website", "description", "businessType", "country"] as const;

/** Updates the caller's own profile; fields not sent keep their value. */
export async function updateOwnProfile(ctx: PartnerContext, actor: Principal, input: ProfileUpdate): Promise<PartnerProfile> {
  if (input.webhook) await assertWebhookUrl(ctx, input.webhook.url);
  return withOutbox(ctx, async (tx, queued) => {
    const row = await ownRow(tx, actor.userId, true);
    const changes: Partial<PartnerRow> = {};
    const changed: string[] = [];
    for (const key of COMPANY_KEYS) {
      const value = input[key];
      if (value !== undefined && value !== row[key]) {
        (changes as Record<string, unknown>)[key] = value;
        changed.push(key);
      }
    }
    let secret: string | undefined;
    if (input.webhook) {
      const w = input.webhook;
      const events = w.events ?? (row.webhookUrl ? row.webhookEvents : [...PARTNER_EVENT_KINDS]);
      const enabled = w.enabled ?? true;
      if (w.url !== row.webhookUrl) (changes.webhookUrl = w.url), changed.push("webhook.url");
      if (JSON.stringify(events) !== JSON.stringify(row.webhookEvents)) (changes.webhookEvents = events), changed.push("webhook.events");
      if (enabled !== row.webhookEnabled) (changes.webhookEnabled = enabled), changed.push("webhook.enabled");
      // Turning the endpoint on again (or pointing it elsewhere) clears what the platform recorded against it.
      if (changes.webhookUrl !== undefined || enabled) Object.assign(changes, { webhookDisabledReason: null, webhookDisabledAt: null, webhookFailingSince: null });
      if (!row.webhookSecret) secret = changes.webhookSecret = newWebhookSecret(ctx.random);
    }
    if (changed.length === 0 && !secret) return profileOf(row);
    const [updated] = await tx
      .update(partners)
      .set({ ...changes, updatedAt: new Date(ctx.now) })
      .where(eq(partners.id, row.id))
      .returning();
    if (!updated) throw new Error("partner row vanished under its lock");
    if (changed.length > 0) queued.push(...nonNull(await enqueueForPartner(tx, ctx, updated, { kind: "partner.profile.updated", data: { partnerId: updated.id, changed } })));
    return profileOf(updated, secret);
  });
}

/** A new secret, shown once; the previous one keeps signing for 24 hours beside it. */
export async function rotateWebhookSecret(ctx: PartnerContext, actor: Principal): Promise<{ secret: string; previousSecretExpiresAt: string | null }> {
  return ctx.db.transaction(async (tx) => {
    const row = await ownRow(tx, actor.userId, true);
    if (!row.webhookSecret) throw new ApiError("conflict", "set a webhook URL first; its secret is created then");
    const secret = newWebhookSecret(ctx.random);
    const until = new Date(ctx.now + SECRET_OVERLAP_MS);
    await tx
      .update(partners)
      .set({ webhookSecret: secret, webhookPreviousSecret: row.webhookSecret, webhookPreviousSecretUntil: until, updatedAt: new Date(ctx.now) })
      .where(eq(partners.id, row.id));
    return { secret, previousSecretExpiresAt: until.toISOString() };
  });
}

/** Queues a `partner.webhook.test` event to the caller's endpoint. */
export async function sendTestEvent(ctx: PartnerContext, actor: Principal): Promise<{ deliveryId: string }> {
  return withOutbox(ctx, async (tx, queued) => {
    const row = await ownRow(tx, actor.userId);
    if (!row.webhookUrl) throw new ApiError("conflict", "no webhook URL is set");
    if (!row.webhookEnabled) throw new ApiError("conflict", "the webhook is disabled; enable it first");
    const id = await enqueueForPartner(tx, ctx, row, { kind: "partner.webhook.test", data: { partnerId: row.id, message: "This is a test event." } });
    queued.push(...nonNull(id));
    return { deliveryId: id as string };
  });
}
