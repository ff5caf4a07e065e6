import { and, asc, eq, gt, type SQL } from "drizzle-orm";
import type { Db } from "../../db/port";
import { subscriptionCharges } from "../../db/tables/finance";
import { apiKeys, blocks, ledgerAccounts, ledgerPostings, ledgerTransactions, matches, profiles, reports, subscriptions, swipes, users, winks } from "../../db/schema";
import { partners } from "../../db/tables/partners";
import { payments } from "../../db/tables/payments";
import { supportAnswers, supportTickets } from "../../db/tables/support";
import { supportVideoRequests } from "../../db/tables/support-video";
import { translationCache } from "../../db/tables/translations";
import { vouchers } from "../../db/tables/vouchers";
import type { KeyValueStore } from "../../kv/port";
import { sha256Hex } from "../../platform/hash";
import { storedContext } from "../ai/context-cache";

export const FORMAT_VERSION = 1;
/** Rows per query: each page is one short indexed read, so no member's data holds a connection long. */
export const DEFAULT_PAGE_SIZE = 1000;

export interface DocumentDeps {
  db: Db;
  kv: KeyValueStore;
  pageSize?: number;
  /** Told of every page read (section, rows), so paging can be observed. */
  onPage?: (section: string, rows: number) => void;
}

/**
 * Writes the document as JSON text, piece by piece: paged sections are serialised a page at a
 * time, so no query result larger than one page is ever held.
 */
class JsonParts {
  readonly parts: string[] = ["{"];
  private first = true;

  private key(name: string): void {
    this.parts.push(`${this.first ? "" : ","}${JSON.stringify(name)}:`);
    this.first = false;
  }

  field(name: string, value: unknown): void {
    this.key(name);
    this.parts.push(JSON.stringify(value));
  }

  /** An object whose fields are written by `fill` (for nested sections with paged arrays). */
  async object(name: string, fill: (inner: JsonParts) => Promise<void>): Promise<void> {
    this.key(name);
    const inner = new JsonParts();
    await fill(inner);
    this.parts.push(inner.text());
  }

  async array<R>(name: string, pages: AsyncIterable<R[]>, map: (row: R) => unknown): Promise<void> {
    this.key(name);
    this.parts.push("[");
    let n = 0;
    for await (const page of pages) {
      for (const row of page) this.parts.push((n++ === 0 ? "" : ",") + JSON.stringify(map(row)));
    }
    this.parts.push("]");
  }

  text(): string {
    return this.parts.join("") + "}";
  }
}

/**
 * Keyset pages: each query starts after the last row of the one before (an index range, not an
 * OFFSET that rereads everything skipped), and the loop ends on a short page.
 */
async function* keyset<R, C>(deps: DocumentDeps, section: string, read: (after: C | undefined, limit: number) => Promise<R[]>, cursorOf: (row: R) => C): AsyncIterable<R[]> {
  const limit = deps.pageSize ?? DEFAULT_PAGE_SIZE;
  let after: C | undefined;
  for (;;) {
    const page = await read(after, limit);
    deps.onPage?.(section, page.length);
    if (page.length > 0) yield page;
    if (page.length < limit) return;
    after = cursorOf(page[page.length - 1]!);
  }
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());
const after = (column: Parameters<typeof gt>[0], cursor: string | number | undefined): SQL | undefined => (cursor === undefined ? undefined : gt(column, cursor));

/** Builds the member's export document (docs/api/account.md#the-document) and returns its JSON text. */
export async function buildExportDocument(deps: DocumentDeps, input: { exportId: string; userId: string; generatedAt: Date }): Promise<string> {
  const { db } = deps;
  const userId = input.userId;
  const out = new JsonParts();
  out.field("formatVersion", FORMAT_VERSION);
  out.field("exportId", input.exportId);
  out.field("generatedAt", input.generatedAt.toISOString());

  const [user] = await db.select().from(users).where(eq(users.id, userId)).limit(1);
  if (!user) throw new Error("the member of an export no longer exists");
  out.field("account", { userId: user.id, subject: user.subject, email: user.email, role: user.role, displayName: user.displayName, createdAt: iso(user.createdAt), lastSeenAt: iso(user.lastSeenAt) });

  const [p] = await db.select().from(profiles).where(eq(profiles.userId, userId)).limit(1);
  out.field(
    "profile",
    p
      ? {
          displayName: p.displayName,
          birthDate: p.birthDate,
          gender: p.gender,
          bio: p.bio,
          tagline: p.tagline,
          interests: p.interests,
          languages: p.languages,
          latitude: p.latitude,
          longitude: p.longitude,
          city: p.city,
          country: p.country,
          createdAt: iso(p.createdAt),
          updatedAt: iso(p.updatedAt),
          lastActiveAt: iso(p.lastActiveAt),
        }
      : null,
  );
  out.field("photos", p ? p.photos.map((url) => ({ url })) : []);
  out.field("preferences", p ? { interestedIn: p.interestedIn, ageMin: p.ageMin, ageMax: p.ageMax, maxDistanceKm: p.maxDistanceKm, visibility: p.visibility } : null);

  await out.array(
    "swipes",
    keyset(deps, "swipes", (c: string | undefined, limit) => db.select().from(swipes).where(and(eq(swipes.swiperId, userId), after(swipes.targetId, c))).orderBy(asc(swipes.targetId)).limit(limit), (r) => r.targetId),
    (r) => ({ targetUserId: r.targetId, action: r.action, createdAt: iso(r.createdAt) }),
  );
  await out.array(
    "winksSent",
    keyset(deps, "winksSent", (c: string | undefined, limit) => db.select().from(winks).where(and(eq(winks.senderId, userId), after(winks.id, c))).orderBy(asc(winks.id)).limit(limit), (r) => r.id),
    (r) => ({ winkId: r.id, toUserId: r.recipientId, message: r.message, status: r.status, matchId: r.matchId, createdAt: iso(r.createdAt), respondedAt: iso(r.respondedAt) }),
  );
  // A pair is stored once (low id, high id): the member's matches are the rows on either side.
  const match = (r: typeof matches.$inferSelect, other: string) => ({ matchId: r.id, otherUserId: other, createdAt: iso(r.createdAt), unmatchedAt: iso(r.unmatchedAt), unmatchedByMe: r.unmatchedBy === userId });
  const lowSide = keyset(deps, "matches", (c: string | undefined, limit) => db.select().from(matches).where(and(eq(matches.userLow, userId), after(matches.userHigh, c))).orderBy(asc(matches.userHigh)).limit(limit), (r) => r.userHigh);
  const highSide = keyset(deps, "matches", (c: string | undefined, limit) => db.select().from(matches).where(and(eq(matches.userHigh, userId), after(matches.userLow, c))).orderBy(asc(matches.userLow)).limit(limit), (r) => r.userLow);
  await out.array("matches", concat(lowSide, highSide), (r) => match(r, r.userLow === userId ? r.userHigh : r.userLow));
  await out.array(
    "blocks",
    keyset(deps, "blocks", (c: string | undefined, limit) => db.select().from(blocks).where(and(eq(blocks.blockerId, userId), after(blocks.blockedId, c))).orderBy(asc(blocks.blockedId)).limit(limit), (r) => r.blockedId),
    (r) => ({ blockedUserId: r.blockedId, createdAt: iso(r.createdAt) }),
  );
  // Only reports the member made: reports about them protect whoever made them.
  await out.array(
    "reportsMade",
    keyset(deps, "reportsMade", (c: string | undefined, limit) => db.select().from(reports).where(and(eq(reports.reporterId, userId), after(reports.id, c))).orderBy(asc(reports.id)).limit(limit), (r) => r.id),
    (r) => ({ reportId: r.id, reportedUserId: r.reportedId, reason: r.reason, details: r.details, createdAt: iso(r.createdAt) }),
  );

  const [wallet] = await db.select().from(ledgerAccounts).where(eq(ledgerAccounts.userId, userId)).limit(1);
  if (!wallet) out.field("wallet", null);
  else
    await out.object("wallet", async (w) => {
      w.field("accountId", wallet.id);
      w.field("balance", wallet.balance);
      await w.array(
        "history",
        keyset(
          deps,
          "wallet.history",
          (c: number | undefined, limit) =>
            db
              .select({ seq: ledgerPostings.seq, transactionId: ledgerPostings.transactionId, amount: ledgerPostings.amount, balanceAfter: ledgerPostings.balanceAfter, createdAt: ledgerPostings.createdAt, type: ledgerTransactions.type, note: ledgerTransactions.note })
              .from(ledgerPostings)
              .innerJoin(ledgerTransactions, eq(ledgerTransactions.id, ledgerPostings.transactionId))
              .where(and(eq(ledgerPostings.accountId, wallet.id), after(ledgerPostings.seq, c)))
              .orderBy(asc(ledgerPostings.seq))
              .limit(limit),
          (r) => r.seq,
        ),
        (r) => ({ seq: r.seq, transactionId: r.transactionId, type: r.type, note: r.note, amount: r.amount, balanceAfter: r.balanceAfter, createdAt: iso(r.createdAt) }),
      );
    });

  await out.array(
    "payments",
    keyset(deps, "payments", (c: string | undefined, limit) => db.select().from(payments).where(and(eq(payments.userId, userId), after(payments.id, c))).orderBy(asc(payments.id)).limit(limit), (r) => r.id),
    // Never the callback token or the idempotency key: they are credentials, not the member's data.
    (r) => ({
      paymentId: r.id,
      provider: r.provider,
      status: r.status,
      amount: r.amount,
      currency: r.currency,
      coins: r.coins,
      providerRef: r.providerRef,
      details: r.details,
      failureReason: r.failureReason,
      createdAt: iso(r.createdAt),
      updatedAt: iso(r.updatedAt),
      completedAt: iso(r.completedAt),
      expiresAt: iso(r.expiresAt),
    }),
  );
  const subs = await db.select().from(subscriptions).where(eq(subscriptions.userId, userId));
  out.field(
    "subscriptions",
    subs.map((s) => ({ subscriptionId: s.id, planId: s.planId, currentPeriodStart: iso(s.currentPeriodStart), currentPeriodEnd: iso(s.currentPeriodEnd), createdAt: iso(s.createdAt), updatedAt: iso(s.updatedAt) })),
  );
  await out.array(
    "subscriptionCharges",
    keyset(deps, "subscriptionCharges", (c: string | undefined, limit) => db.select().from(subscriptionCharges).where(and(eq(subscriptionCharges.userId, userId), after(subscriptionCharges.transactionId, c))).orderBy(asc(subscriptionCharges.transactionId)).limit(limit), (r) => r.transactionId),
    (r) => ({ transactionId: r.transactionId, planId: r.planId, coins: r.coins, createdAt: iso(r.createdAt) }),
  );
  await out.array(
    "vouchersRedeemed",
    keyset(deps, "vouchersRedeemed", (c: string | undefined, limit) => db.select().from(vouchers).where(and(eq(vouchers.redeemedBy, userId), after(vouchers.id, c))).orderBy(asc(vouchers.id)).limit(limit), (r) => r.id),
    (r) => ({ voucherId: r.id, hint: r.hint, coins: r.coins, redeemedAt: iso(r.redeemedAt) }),
  );

  await out.object("support", async (s) => {
    await s.array(
      "tickets",
      keyset(
        deps,
        "support.tickets",
        (c: string | undefined, limit) =>
          db
            .select({ ticket: supportTickets, answer: supportAnswers })
            .from(supportTickets)
            .innerJoin(supportAnswers, eq(supportAnswers.id, supportTickets.answerId))
            .where(and(eq(supportTickets.userId, userId), after(supportTickets.id, c)))
            .orderBy(asc(supportTickets.id))
            .limit(limit),
        (r) => r.ticket.id,
      ),
      ({ ticket: t, answer: a }) => ({
        ticketId: t.id,
        category: t.category,
        language: t.language,
        reasons: t.reasons,
        status: t.status,
        createdAt: iso(t.createdAt),
        resolvedAt: iso(t.resolvedAt),
        answer: { answerId: a.id, category: a.category, language: a.language, via: a.via, escalated: a.escalated, reasons: a.reasons, cited: a.cited, createdAt: iso(a.createdAt) },
      }),
    );
    await s.array(
      "videoRequests",
      keyset(deps, "support.videoRequests", (c: string | undefined, limit) => db.select().from(supportVideoRequests).where(and(eq(supportVideoRequests.userId, userId), after(supportVideoRequests.id, c))).orderBy(asc(supportVideoRequests.id)).limit(limit), (r) => r.id),
      (r) => ({ requestId: r.id, reason: r.reason, priority: r.priority, platform: r.platform, language: r.language, callbackTimes: r.callbackTimes, timezone: r.timezone, status: r.status, filedByStaff: r.filedBy !== null, createdAt: iso(r.createdAt) }),
    );
  });

  const context = await storedContext(deps.kv, userId);
  out.field("aiContext", context && { profile: context.profile, conversation: context.conversation, cachedAt: new Date(context.cachedAt).toISOString() });

  // Profile translations are cached by the content of the fields translated; the member's own are
  // those of their current bio, tagline and interests (member-text.ts).
  const translations = p
    ? await db
        .select()
        .from(translationCache)
        .where(and(eq(translationCache.kind, "profile"), eq(translationCache.cacheKey, await sha256Hex(JSON.stringify([p.bio, p.tagline, p.interests])))))
        .orderBy(asc(translationCache.targetLanguage))
    : [];
  out.field(
    "profileTranslations",
    translations.map((t) => ({ targetLanguage: t.targetLanguage, result: t.result, createdAt: iso(t.createdAt) })),
  );

  const [partner] = await db.select().from(partners).where(eq(partners.userId, userId)).limit(1);
  // Never the webhook secrets: they sign deliveries and stay with the platform and the partner's receiver.
  out.field(
    "partner",
    partner
      ? {
          partnerId: partner.id,
          companyName: partner.companyName,
          contactName: partner.contactName,
          contactEmail: partner.contactEmail,
          website: partner.website,
          description: partner.description,
          businessType: partner.businessType,
          country: partner.country,
          status: partner.status,
          reviewedAt: iso(partner.reviewedAt),
          rejectionReason: partner.rejectionReason,
          webhook: { url: partner.webhookUrl, events: partner.webhookEvents, enabled: partner.webhookEnabled, disabledReason: partner.webhookDisabledReason, disabledAt: iso(partner.webhookDisabledAt) },
          createdAt: iso(partner.createdAt),
          updatedAt: iso(partner.updatedAt),
        }
      : null,
  );

  await out.array(
    "apiKeys",
    keyset(deps, "apiKeys", (c: string | undefined, limit) => db.select().from(apiKeys).where(and(eq(apiKeys.createdBy, userId), after(apiKeys.id, c))).orderBy(asc(apiKeys.id)).limit(limit), (r) => r.id),
    (k) => ({ keyId: k.id, prefix: k.prefix, name: k.name, createdAt: iso(k.createdAt), expiresAt: iso(k.expiresAt), revokedAt: iso(k.revokedAt), lastUsedAt: iso(k.lastUsedAt) }),
  );
  return out.text();
}

async function* concat<T>(...sources: AsyncIterable<T>[]): AsyncIterable<T> {
  for (const source of sources) yield* source;
}
