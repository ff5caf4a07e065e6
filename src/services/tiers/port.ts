import type { Db } from "../../db/port";
import type { KeyValueStore } from "../../kv/port";
import type { Logger } from "../../platform/logger";
import { createSwrCache, type Background, type CacheTuning } from "../../platform/swr-cache";

export const TIERS = ["standard", "premium", "enterprise"] as const;
export type Tier = (typeof TIERS)[number];

export interface TierAnswer {
  tier: Tier;
  /** When a paid tier's period ends (ms); null for standard, which ends only by a new subscription. */
  until: number | null;
}

/** Which plan tier a user is on; subscriptions fill it. Everyone without a paid plan is standard. */
export interface TierLookup {
  tierOf(db: Db, userId: string): Promise<TierAnswer>;
}

export interface CachedTierLookup {
  /** `background` keeps a refresh of a stale entry alive past the response and reports its failure. */
  tierOf(db: Db, userId: string, background: Background): Promise<Tier>;
  /**
   * A user's tier changed here (they subscribed): drops their entry on this instance at once and
   * tells the other instances, through `background`, to drop theirs.
   */
  changed(userId: string, background: Background): void;
}

/** Fresh for 30 s (less by up to a fifth, so entries filled together come due apart) where no change is heard of. */
export const TIER_FRESH_MS = 30_000;
/** Fresh this long while the instance hears of every change (the store's publish/subscribe). */
export const TIER_FRESH_LISTENING_MS = 300_000;
/** Past fresh, a tier is still answered for this long while it is read again in the background. */
export const TIER_STALE_MS = 300_000;
/** After a failed subscribe, the next tier lookup tries again once this has passed. */
const LISTEN_RETRY_MS = 30_000;
export const TIER_CHANGES_CHANNEL = "tiers:changed";

/**
 * Caches answers per instance: the rate limiter asks on every request, and a database read for
 * each would cost more than the rest of a small request. A tier changes in two ways only:
 * - a subscription (POST /api/v1/subscriptions): the instance that took it drops the entry and
 *   publishes the user id on the store, and every instance listening drops its own. While an
 *   instance listens, its entries stay fresh for TIER_FRESH_LISTENING_MS, the bound on a change
 *   whose message was lost (the store's connection down at that moment); where the store cannot
 *   subscribe (Upstash over REST, on Workers), for TIER_FRESH_MS;
 * - a paid period's end: known in advance, so a paid tier's entry ends exactly then.
 * Past fresh, the entry is answered while it is read again (see createSwrCache): no request waits
 * for the database for a tier it knew within the last TIER_STALE_MS. Listening starts with the
 * first lookup, so an app that serves no request opens no subscription.
 */
export function cachedTierLookup(inner: TierLookup, options: CacheTuning & { kv: KeyValueStore; logger: Logger }): CachedTierLookup {
  const { kv, logger, ...tuning } = options;
  const { now } = tuning;
  let listening: "no" | "starting" | "yes" = "no";
  let retryAt = 0;
  const cache = createSwrCache<TierAnswer>({
    freshMs: () => (listening === "yes" ? TIER_FRESH_LISTENING_MS : TIER_FRESH_MS),
    staleMs: TIER_STALE_MS,
    maxEntries: 50_000,
    expiresAt: (answer) => answer.until,
    ...tuning,
  });
  const listen = () => {
    if (listening !== "no" || !kv.subscribe || now() < retryAt) return;
    listening = "starting";
    kv.subscribe(TIER_CHANGES_CHANNEL, (userId) => cache.forget(userId)).then(
      () => {
        listening = "yes";
      },
      (err) => {
        listening = "no";
        retryAt = now() + LISTEN_RETRY_MS;
        logger.warn("tier changes: subscribe failed; tiers are cached for 30 s meanwhile", { err: String(err) });
      },
    );
  };
  return {
    async tierOf(db, userId, background) {
      listen();
      return (await cache.get(userId, () => inner.tierOf(db, userId), background)).tier;
    },
    changed(userId, background) {
      cache.forget(userId);
      background(kv.publish(TIER_CHANGES_CHANNEL, userId));
    },
  };
}
