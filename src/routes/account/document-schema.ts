import { z } from "@hono/zod-openapi";

/**
 * The export document as the download route serves it (docs/api/account.md#the-document). The
 * response contract checks every download in the tests against this schema, so a field added to
 * the builder without being documented here fails them.
 */
const time = z.string().openapi({ description: "ISO 8601, UTC" });
const maybeTime = time.nullable();

const Account = z.object({ userId: z.string(), subject: z.string(), email: z.string().nullable(), role: z.string(), displayName: z.string().nullable(), createdAt: time, lastSeenAt: maybeTime });
const Profile = z.object({
  displayName: z.string(),
  birthDate: z.string(),
  gender: z.string(),
  bio: z.string().nullable(),
  tagline: z.string().nullable(),
  interests: z.array(z.string()),
  languages: z.array(z.string()),
  latitude: z.number().nullable(),
  longitude: z.number().nullable(),
  city: z.string().nullable(),
  country: z.string().nullable(),
  createdAt: time,
  updatedAt: time,
  lastActiveAt: time,
});
const Preferences = z.object({ interestedIn: z.array(z.string()), ageMin: z.number().int(), ageMax: z.number().int(), maxDistanceKm: z.number().int(), visibility: z.string() });
const Swipe = z.object({ targetUserId: z.string(), action: z.string(), createdAt: time });
const Wink = z.object({ winkId: z.string(), toUserId: z.string(), message: z.string().nullable(), status: z.string(), matchId: z.string().nullable(), createdAt: time, respondedAt: maybeTime });
const Match = z.object({ matchId: z.string(), otherUserId: z.string(), createdAt: time, unmatchedAt: maybeTime, unmatchedByMe: z.boolean() });
const Block = z.object({ blockedUserId: z.string(), createdAt: time });
const Report = z.object({ reportId: z.string(), reportedUserId: z.string(), reason: z.string(), details: z.string().nullable(), createdAt: time });
const Posting = z.object({ seq: z.number().int(), transactionId: z.string(), type: z.string(), note: z.string().nullable(), amount: z.number().int(), balanceAfter: z.number().int(), createdAt: time });
const Wallet = z.object({ accountId: z.string(), balance: z.number().int(), history: z.array(Posting) });
const Payment = z.object({
  paymentId: z.string(),
  provider: z.string(),
  status: z.string(),
  amount: z.number(),
  currency: z.string(),
  coins: z.number().int(),
  providerRef: z.string().nullable(),
  details: z.record(z.string(), z.unknown()).openapi({ description: "What the member gave for the payment (e.g. the phone number for mobile money)" }),
  failureReason: z.string().nullable(),
  createdAt: time,
  updatedAt: time,
  completedAt: maybeTime,
  expiresAt: maybeTime,
});
const Subscription = z.object({ subscriptionId: z.string(), planId: z.string(), currentPeriodStart: time, currentPeriodEnd: time, createdAt: time, updatedAt: time });
const SubscriptionCharge = z.object({ transactionId: z.string(), planId: z.string(), coins: z.number().int(), createdAt: time });
const Voucher = z.object({ voucherId: z.string(), hint: z.string(), coins: z.number().int(), redeemedAt: maybeTime });
const Answer = z.object({ answerId: z.string(), category: z.string(), language: z.string(), via: z.string(), escalated: z.boolean(), reasons: z.array(z.string()), cited: z.boolean(), createdAt: time });
const Ticket = z.object({ ticketId: z.string(), category: z.string(), language: z.string(), reasons: z.array(z.string()), status: z.string(), createdAt: time, resolvedAt: maybeTime, answer: Answer });
const VideoRequest = z.object({
  requestId: z.string(),
  reason: z.string(),
  priority: z.string(),
  platform: z.string(),
  language: z.string(),
  callbackTimes: z.unknown(),
  timezone: z.string(),
  status: z.string(),
  filedByStaff: z.boolean(),
  createdAt: time,
});
const AiContext = z.object({ profile: z.record(z.string(), z.unknown()).nullable(), conversation: z.array(z.string()), cachedAt: time });
const ProfileTranslation = z.object({ targetLanguage: z.string(), result: z.record(z.string(), z.unknown()), createdAt: time });
const Partner = z.object({
  partnerId: z.string(),
  companyName: z.string(),
  contactName: z.string(),
  contactEmail: z.string(),
  website: z.string().nullable(),
  description: z.string(),
  businessType: z.string(),
  country: z.string(),
  status: z.string(),
  reviewedAt: maybeTime,
  rejectionReason: z.string().nullable(),
  webhook: z.object({ url: z.string().nullable(), events: z.array(z.string()), enabled: z.boolean(), disabledReason: z.string().nullable(), disabledAt: maybeTime }),
  createdAt: time,
  updatedAt: time,
});
const ApiKey = z.object({ keyId: z.string(), prefix: z.string(), name: z.string().nullable(), createdAt: time, expiresAt: maybeTime, revokedAt: maybeTime, lastUsedAt: maybeTime });

export const ExportDocument = z
  .object({
    formatVersion: z.literal(1),
    exportId: z.string(),
    generatedAt: time,
    account: Account,
    profile: Profile.nullable(),
    photos: z.array(z.object({ url: z.string() })),
    preferences: Preferences.nullable(),
    swipes: z.array(Swipe),
    winksSent: z.array(Wink),
    matches: z.array(Match),
    blocks: z.array(Block),
    reportsMade: z.array(Report),
    wallet: Wallet.nullable(),
    payments: z.array(Payment),
    subscriptions: z.array(Subscription),
    subscriptionCharges: z.array(SubscriptionCharge),
    vouchersRedeemed: z.array(Voucher),
    support: z.object({ tickets: z.array(Ticket), videoRequests: z.array(VideoRequest) }),
    aiContext: AiContext.nullable(),
    profileTranslations: z.array(ProfileTranslation),
    partner: Partner.nullable(),
    apiKeys: z.array(ApiKey),
  })
  .openapi("AccountExportDocument", { description: "Everything the platform keeps about the member; field by field in docs/api/account.md" });
