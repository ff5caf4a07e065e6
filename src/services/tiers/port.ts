import type { Db } from "../../db/port";

export const TIERS = ["standard", "premium", "enterprise"] as const;
export type Tier = (typeof TIERS)[number];

/** Which plan tier a user is on; subscriptions fill it. Everyone without a paid plan is standard. */
export interface TierLookup {
  tierOf(db: Db, userId: string): Promise<Tier>;
}

export interface CachedTierLookup extends TierLookup {
  /** Drops a user's cached tier: the instance that took their payment knows it changed. */
  forget(userId: string): void;
}

/**
 * Caches answers briefly per instance: the rate limiter asks on every request. A new
 * subscriber's higher limits apply at once on the instance that took the payment (it forgets
 * their entry) and within `ttlMs` on the others.
 */
export function cachedTierLookup(inner: TierLookup, now: () => number, ttlMs = 30_000, maxEntries = 50_000): CachedTierLookup {
  const cache = new Map<string, { tier: Tier; until: number }>();
  // A lookup that was already reading when a tier was forgotten may hold the old tier: it answers
  // with it but does not cache it. Forgetting is rare (a payment), so one counter for all users.
  let forgets = 0;
  return {
    async tierOf(db, userId) {
      const t = now();
      const hit = cache.get(userId);
      if (hit && hit.until > t) return hit.tier;
      const seen = forgets;
      const tier = await inner.tierOf(db, userId);
      if (seen !== forgets) return tier;
      if (cache.size >= maxEntries) cache.clear();
      cache.set(userId, { tier, until: t + ttlMs });
      return tier;
    },
    forget(userId) {
      forgets += 1;
      cache.delete(userId);
    },
  };
}
