import type { Db } from "../../db/port";
import { createSwrCache, type Background, type CacheTuning } from "../../platform/swr-cache";

export const TIERS = ["standard", "premium", "enterprise"] as const;
export type Tier = (typeof TIERS)[number];

/** Which plan tier a user is on; subscriptions fill it. Everyone without a paid plan is standard. */
export interface TierLookup {
  tierOf(db: Db, userId: string): Promise<Tier>;
}

export interface CachedTierLookup {
  /** `background` keeps a refresh of a stale entry alive past the response and reports its failure. */
  tierOf(db: Db, userId: string, background: Background): Promise<Tier>;
  /** Drops a user's cached tier: the instance that took their payment knows it changed. */
  forget(userId: string): void;
}

/** Fresh for 30 s (less by up to a fifth, so entries filled together come due apart). */
export const TIER_FRESH_MS = 30_000;
/** Past fresh, a tier is still answered for this long while it is read again in the background. */
export const TIER_STALE_MS = 300_000;

/**
 * Caches answers per instance: the rate limiter asks on every request. A new subscriber's higher
 * limits apply at once on the instance that took the payment (it forgets their entry); on the
 * others, within TIER_FRESH_MS and the one request that then starts the re-read, which is answered
 * with the tier it had (see createSwrCache): no request waits for the database for a tier it knew
 * within the last TIER_STALE_MS.
 */
export function cachedTierLookup(inner: TierLookup, options: CacheTuning): CachedTierLookup {
  const cache = createSwrCache<Tier>({ freshMs: TIER_FRESH_MS, staleMs: TIER_STALE_MS, maxEntries: 50_000, ...options });
  return {
    tierOf: (db, userId, background) => cache.get(userId, () => inner.tierOf(db, userId), background),
    forget: (userId) => cache.forget(userId),
  };
}
