import type { Db } from "../../db/port";

export const TIERS = ["standard", "premium", "enterprise"] as const;
export type Tier = (typeof TIERS)[number];

/** Which plan tier a user is on; subscriptions fill it. Everyone without a paid plan is standard. */
export interface TierLookup {
  tierOf(db: Db, userId: string): Promise<Tier>;
}

/**
 * Caches answers briefly per instance: the rate limiter asks on every request, and a new
 * subscriber's higher limits may take up to `ttlMs` to apply.
 */
export function cachedTierLookup(inner: TierLookup, now: () => number, ttlMs = 30_000, maxEntries = 50_000): TierLookup {
  const cache = new Map<string, { tier: Tier; until: number }>();
  return {
    async tierOf(db, userId) {
      const t = now();
      const hit = cache.get(userId);
      if (hit && hit.until > t) return hit.tier;
      const tier = await inner.tierOf(db, userId);
      if (cache.size >= maxEntries) cache.clear();
      cache.set(userId, { tier, until: t + ttlMs });
      return tier;
    },
  };
}
