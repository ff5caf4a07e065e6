import { sql } from "drizzle-orm";
import { bigint, bigserial, boolean, check, date, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";

/**
 * A person on the platform. `subject` is the identity provider's `sub`; the row is created on
 * the first authenticated request.
 */
export const users = pgTable(
  "users",
  {
    id: text("id").primaryKey(),
    subject: text("subject").notNull().unique(),
    email: text("email"),
    role: text("role").notNull().default("user"),
    /**
     * The `iat` of the token that last set `role`: a token issued earlier never changes it, so an
     * admin token minted before a demotion cannot restore the role (ensure-user.ts).
     */
    roleTokenIssuedAt: timestamp("role_token_issued_at", { withTimezone: true, mode: "date" }),
    /** Shown on leaderboards and cards; the profile sets it. */
    displayName: text("display_name"),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true, mode: "date" }),
    /**
     * When the member deleted their account (services/account/deletion.ts): from then on they are
     * invisible and their credentials answer 403 account_deleted; restore clears it within the
     * grace period, and the hourly erasure removes the member for good after it.
     */
    deletedAt: timestamp("deleted_at", { withTimezone: true, mode: "date" }),
    /** The deletion hid a visible profile, so a restore shows it again (a hidden one stays hidden). */
    profileHiddenByDeletion: boolean("profile_hidden_by_deletion").notNull().default(false),
    /**
     * Set on a tombstone: the row an erased member's accounting records point to instead of them
     * (services/account/erasure.ts). It carries nothing about the person; its subject is random.
     */
    erasedAt: timestamp("erased_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [
    check("users_role_check", sql`${t.role} in ('user', 'admin')`),
    index("users_created_at_idx").on(t.createdAt),
    // The erasure's queue: deleted members whose grace period may be over.
    index("users_deleted_idx").on(t.deletedAt).where(sql`${t.deletedAt} is not null`),
  ],
);

/**
 * Admin API keys. Only the SHA-256 of a key is stored (lookups are by hash through the unique
 * index, so no comparison of secrets happens in our code); `prefix` lets admins tell keys apart.
 */
export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    keyHash: text("key_hash").notNull().unique(),
    prefix: text("prefix").notNull(),
    name: text("name"),
    createdBy: text("created_by")
      .notNull()
      .references(() => users.id),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }),
    revokedAt: timestamp("revoked_at", { withTimezone: true, mode: "date" }),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [index("api_keys_created_by_idx").on(t.createdBy)],
);

/** The latest heartbeat of each VM agent; older ones are not kept. */
export const vmHeartbeats = pgTable("vm_heartbeats", {
  vmId: text("vm_id").primaryKey(),
  payload: jsonb("payload").notNull(),
  receivedAt: timestamp("received_at", { withTimezone: true, mode: "date" }).notNull(),
});

/**
 * Ledger accounts: one wallet per user plus system accounts (mint, subscription revenue, …).
 * `balance` is the sum of the account's postings, kept in the same transaction as each posting;
 * a wallet can never go below zero (the posting trigger), system accounts can (the mint is
 * negative by the coins it issued), and all balances together always sum to zero.
 */
export const ledgerAccounts = pgTable(
  "ledger_accounts",
  {
    id: text("id").primaryKey(),
    kind: text("kind").notNull(),
    userId: text("user_id").references(() => users.id),
    balance: bigint("balance", { mode: "number" }).notNull().default(0),
    /** The `seq` of the account's newest posting: moved with the balance, under the same row lock. */
    lastSeq: bigint("last_seq", { mode: "number" }).notNull().default(0),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [
    // No CHECKs: Postgres compiles them again for every UPDATE statement, and each transfer
    // updates two balances. The kind and the owner rule (a wallet has a user, a system account
    // none) are checked by a trigger that fires only when kind or user_id is written (migration
    // 0023). A balance moves only through a posting, whose trigger refuses a negative wallet
    // (ledger_accounts_wallet_nonnegative); any other update of it is refused (migration 0023).
    uniqueIndex("ledger_accounts_user_wallet_idx").on(t.userId),
    // Deliberately no index on balance, and the table is stored with fillfactor 70 (migration
    // 0017): every transfer updates two balances, and with no indexed column changing those
    // updates stay on their page (HOT), touch no index and leave nothing for vacuum. The
    // leaderboard scans the wallets instead, at most once per page of the board per 30 s.
  ],
);

/** One business event (a transfer, an award, a subscription payment, a funding credit). */
export const ledgerTransactions = pgTable(
  "ledger_transactions",
  {
    id: text("id").primaryKey(),
    type: text("type").notNull(),
    note: text("note"),
    /**
     * Who acted: the sender, the subscriber, the buyer, or the admin who awarded. Not a foreign
     * key (migration 0023): its check locked the person's row on every transfer, a twentieth of
     * the database's work on one, and users are never deleted.
     */
    actorUserId: text("actor_user_id"),
    /** Where the money came from outside (a payment id), so it is credited at most once. */
    externalRef: text("external_ref").unique(),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  // type is one of 'transfer', 'award', 'subscription', 'funding': checked by an insert trigger
  // (migration 0023), which costs a third of what the CHECK it replaced did on every insert.
  // Finance metrics read a window of transactions by time and their postings by transaction id:
  // one index entry per transaction, not per posting (docs/design/ledger.md, "Finance metrics").
  // The funding transactions of a window, id included, are read from the partial index alone
  // (reconciliation); it grows with funding credits only, not with every transfer.
  (t) => [
    index("ledger_transactions_created_idx").on(t.createdAt),
    index("ledger_transactions_funding_idx").on(t.createdAt, t.id).where(sql`${t.type} = 'funding'`),
  ],
);

/**
 * Immutable, balanced (per transaction) movements; corrections are new transactions. Both ids
 * are checked by the ledger's triggers rather than foreign keys (migration 0020): the posting
 * trigger already finds and locks the account it moves, the statement trigger finds the
 * transaction, and accounts and transactions can never be deleted. Each foreign key cost a
 * row lock and a query per posting, a fifth of the database's work on a transfer.
 */
export const ledgerPostings = pgTable(
  "ledger_postings",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    transactionId: text("transaction_id").notNull(),
    accountId: text("account_id").notNull(),
    amount: bigint("amount", { mode: "number" }).notNull(),
    balanceAfter: bigint("balance_after", { mode: "number" }).notNull(),
    /**
     * The posting's place in its account: 1, 2, 3, … with no gaps, assigned by the posting trigger
     * while it holds the account's row lock, so it is the order the balance moved in (`id` is
     * drawn before the posting waits for that lock). History is ordered and paged by it.
     */
    seq: bigint("seq", { mode: "number" }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [
    // amount <> 0 is checked by ledger_apply_posting(), which runs for every posting anyway.
    uniqueIndex("ledger_postings_account_seq_idx").on(t.accountId, t.seq),
    index("ledger_postings_transaction_idx").on(t.transactionId),
  ],
);

/**
 * Idempotency keys per caller. A completed key holds the response to replay; the effect and the
 * completion are written in one transaction, so a replay never repeats or loses an effect.
 */
export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    userId: text("user_id").notNull(),
    key: text("key").notNull(),
    fingerprint: text("fingerprint").notNull(),
    status: text("status").notNull(),
    responseStatus: integer("response_status"),
    responseBody: jsonb("response_body"),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
    completedAt: timestamp("completed_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.key] }),
    check("idempotency_keys_status_check", sql`${t.status} in ('in_flight', 'done')`),
    index("idempotency_keys_created_idx").on(t.createdAt),
  ],
);

export const plans = pgTable("plans", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  priceCoins: integer("price_coins").notNull(),
  periodDays: integer("period_days").notNull(),
  description: text("description").notNull(),
});

/** One row per subscriber: subscribing again extends or replaces the current period. */
export const subscriptions = pgTable(
  "subscriptions",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .unique()
      .references(() => users.id),
    planId: text("plan_id")
      .notNull()
      .references(() => plans.id),
    currentPeriodStart: timestamp("current_period_start", { withTimezone: true, mode: "date" }).notNull(),
    currentPeriodEnd: timestamp("current_period_end", { withTimezone: true, mode: "date" }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [index("subscriptions_period_end_idx").on(t.currentPeriodEnd)],
);

/**
 * A person's dating profile (one per user). Exact position and birth date are private: others
 * see a city, a rounded distance and an age.
 */
export const profiles = pgTable(
  "profiles",
  {
    userId: text("user_id")
      .primaryKey()
      .references(() => users.id),
    displayName: text("display_name").notNull(),
    birthDate: date("birth_date", { mode: "string" }).notNull(),
    gender: text("gender").notNull(),
    interestedIn: text("interested_in").array().notNull(),
    ageMin: integer("age_min").notNull().default(18),
    ageMax: integer("age_max").notNull().default(99),
    maxDistanceKm: integer("max_distance_km").notNull().default(100),
    bio: text("bio"),
    tagline: text("tagline"),
    interests: text("interests").array().notNull().default(sql`'{}'`),
    photos: text("photos").array().notNull().default(sql`'{}'`),
    languages: text("languages").array().notNull().default(sql`'{}'`),
    latitude: doublePrecision("latitude"),
    longitude: doublePrecision("longitude"),
    city: text("city"),
    country: text("country"),
    visibility: text("visibility").notNull().default("visible"),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull(),
    lastActiveAt: timestamp("last_active_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [
    check("profiles_gender_check", sql`${t.gender} in ('woman', 'man', 'nonbinary', 'other')`),
    check("profiles_visibility_check", sql`${t.visibility} in ('visible', 'hidden')`),
    check("profiles_age_range_check", sql`${t.ageMin} >= 18 and ${t.ageMax} >= ${t.ageMin} and ${t.ageMax} <= 120`),
    index("profiles_discovery_idx").on(t.country, t.gender, t.birthDate).where(sql`${t.visibility} = 'visible'`),
    // Placed profiles are searched through profiles_discovery_placed_idx (migration 0041,
    // hand-written: drizzle cannot declare INCLUDE columns), which answers the feed's filters
    // from the index alone.
    // The feed's same-country arm (profiles without a position) reads
    // profiles_discovery_unplaced_idx (migration 0038, hand-written for the same reason), which
    // includes every column the arm reads.
  ],
);

/** Blocks are directed; a block hides both people from each other everywhere. */
export const blocks = pgTable(
  "blocks",
  {
    blockerId: text("blocker_id")
      .notNull()
      .references(() => users.id),
    blockedId: text("blocked_id")
      .notNull()
      .references(() => users.id),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.blockerId, t.blockedId] }), index("blocks_blocked_idx").on(t.blockedId), check("blocks_not_self", sql`${t.blockerId} <> ${t.blockedId}`)],
);

export const reports = pgTable(
  "reports",
  {
    id: text("id").primaryKey(),
    reporterId: text("reporter_id")
      .notNull()
      .references(() => users.id),
    reportedId: text("reported_id")
      .notNull()
      .references(() => users.id),
    reason: text("reason").notNull(),
    details: text("details"),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [
    check("reports_reason_check", sql`${t.reason} in ('spam', 'harassment', 'fake_profile', 'underage', 'inappropriate_content', 'other')`),
    index("reports_reported_idx").on(t.reportedId),
    // The feed leaves out whoever the viewer reported.
    index("reports_reporter_idx").on(t.reporterId, t.reportedId),
  ],
);

/** One swipe per ordered pair: the primary key makes a repeated swipe a conflict. */
export const swipes = pgTable(
  "swipes",
  {
    swiperId: text("swiper_id")
      .notNull()
      .references(() => users.id),
    targetId: text("target_id")
      .notNull()
      .references(() => users.id),
    action: text("action").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.swiperId, t.targetId] }),
    index("swipes_target_idx").on(t.targetId),
    check("swipes_action_check", sql`${t.action} in ('like', 'pass', 'wink')`),
    check("swipes_not_self", sql`${t.swiperId} <> ${t.targetId}`),
  ],
);

/**
 * A match between two people, stored once per unordered pair (`userLow` < `userHigh`): the
 * unique index makes two simultaneous mutual likes create exactly one row.
 */
export const matches = pgTable(
  "matches",
  {
    id: text("id").primaryKey(),
    userLow: text("user_low")
      .notNull()
      .references(() => users.id),
    userHigh: text("user_high")
      .notNull()
      .references(() => users.id),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
    unmatchedAt: timestamp("unmatched_at", { withTimezone: true, mode: "date" }),
    unmatchedBy: text("unmatched_by"),
  },
  (t) => [uniqueIndex("matches_pair_idx").on(t.userLow, t.userHigh), index("matches_high_idx").on(t.userHigh), check("matches_ordered_pair", sql`${t.userLow} < ${t.userHigh}`)],
);

export const winks = pgTable(
  "winks",
  {
    id: text("id").primaryKey(),
    senderId: text("sender_id")
      .notNull()
      .references(() => users.id),
    recipientId: text("recipient_id")
      .notNull()
      .references(() => users.id),
    message: text("message"),
    status: text("status").notNull(),
    matchId: text("match_id").references(() => matches.id),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
    respondedAt: timestamp("responded_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [
    check("winks_status_check", sql`${t.status} in ('pending', 'accepted', 'declined')`),
    check("winks_not_self", sql`${t.senderId} <> ${t.recipientId}`),
    uniqueIndex("winks_one_pending_idx").on(t.senderId, t.recipientId).where(sql`${t.status} = 'pending'`),
    index("winks_recipient_idx").on(t.recipientId, t.status, t.createdAt),
    // A member's own winks, paged by id for their data export.
    index("winks_sender_idx").on(t.senderId, t.id),
    // Deleting a match checks that no wink still points at it; without this, each check read every wink.
    index("winks_match_idx").on(t.matchId).where(sql`${t.matchId} is not null`),
  ],
);

/** Winks sent per user and UTC day; the daily cap is enforced by one conditional upsert. */
export const winkDailyCounts = pgTable(
  "wink_daily_counts",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    day: date("day", { mode: "string" }).notNull(),
    count: integer("count").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.day] })],
);

/**
 * How often a profile was shown in feeds per UTC day, so no one dominates everyone's feed.
 * A soft counter keyed by user id, deliberately without a foreign key: every served card
 * inserts or bumps a row, and the key check on users (a row lock per new counter) was about a
 * third of a feed page's database time. A counter for an id that no longer exists is harmless.
 */
export const profileImpressions = pgTable(
  "profile_impressions",
  {
    userId: text("user_id").notNull(),
    day: date("day", { mode: "string" }).notNull(),
    count: integer("count").notNull(),
  },
  // No index on count: each card served bumps a count, and an indexed count would make every
  // bump a new row version with two new index entries instead of an in-place (HOT) update. The
  // day's capped profiles are listed in profile_impressions_capped instead (migration 0025).
  (t) => [primaryKey({ columns: [t.userId, t.day] })],
);

/**
 * Who was shown which profile on a UTC day. A profile's count goes up once per viewer and day
 * (the counting statement inserts here first and counts only the rows that are new), so one
 * member opening their feed again and again cannot spend someone's daily cap and hide them from
 * everyone else. Kept for today and yesterday (services/discovery/impressions.ts).
 */
export const profileImpressionViewers = pgTable(
  "profile_impression_viewers",
  {
    day: date("day", { mode: "string" }).notNull(),
    userId: text("user_id").notNull(),
    viewerId: text("viewer_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.day, t.userId, t.viewerId] })],
);

/** Profiles that reached the daily impression cap on `day`, written by the feed's counting statement. */
export const profileImpressionsCapped = pgTable(
  "profile_impressions_capped",
  {
    day: date("day", { mode: "string" }).notNull(),
    userId: text("user_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.day, t.userId] })],
);

/**
 * The outbox of live events per recipient. Stored before anything is pushed, so a client that
 * reconnects with Last-Event-ID gets everything it missed; the id is the SSE event id. Events
 * are kept for EVENT_RETENTION_DAYS (services/matching/event-retention.ts); the created_at index
 * serves that pruning.
 */
export const events = pgTable(
  "events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    type: text("type").notNull(),
    data: jsonb("data").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [
    index("events_user_idx").on(t.userId, t.id),
    index("events_created_idx").on(t.createdAt),
    check("events_type_check", sql`${t.type} in ('match.created', 'wink.received', 'wink.accepted')`),
  ],
);
