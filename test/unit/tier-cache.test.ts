import { describe, expect, it } from "vitest";
import type { Db } from "../../src/db/port";
import { cachedTierLookup, TIER_FRESH_MS, TIER_STALE_MS, type Tier } from "../../src/services/tiers/port";

const db = {} as Db;

/** A tier source whose answers the test releases one at a time. */
function heldSource() {
  const waiting: ((tier: Tier) => void)[] = [];
  let reads = 0;
  return {
    source: {
      tierOf: () => {
        reads += 1;
        return new Promise<Tier>((resolve) => waiting.push(resolve));
      },
    },
    answer: (tier: Tier) => waiting.shift()?.(tier),
    reads: () => reads,
  };
}

/** Collects the refreshes the cache hands to the request's background (waitUntil on Workers). */
function backgroundLog() {
  const work: Promise<unknown>[] = [];
  return { keep: (p: Promise<unknown>) => void work.push(p), count: () => work.length, settled: () => Promise.all(work) };
}

describe("the per-instance tier cache", () => {
  it("reads the source once while fresh, answers the old tier while a stale entry is re-read, then the new one", async () => {
    let now = 0;
    const held = heldSource();
    const bg = backgroundLog();
    // random 0: no jitter, so the entry is fresh for exactly TIER_FRESH_MS.
    const tiers = cachedTierLookup(held.source, { now: () => now, random: () => 0 });
    const first = tiers.tierOf(db, "u1", bg.keep);
    held.answer("standard");
    expect(await first).toBe("standard");
    expect(await tiers.tierOf(db, "u1", bg.keep)).toBe("standard");
    expect(held.reads()).toBe(1);

    now = TIER_FRESH_MS + 1;
    // Stale: answered at once from memory, one re-read in the background, shared by later callers.
    expect(await tiers.tierOf(db, "u1", bg.keep)).toBe("standard");
    expect(await tiers.tierOf(db, "u1", bg.keep)).toBe("standard");
    expect(held.reads()).toBe(2);
    expect(bg.count()).toBe(1);
    held.answer("premium");
    await bg.settled();
    expect(await tiers.tierOf(db, "u1", bg.keep)).toBe("premium");
    expect(held.reads()).toBe(2);
  });

  it("makes the caller wait for the source past the stale window", async () => {
    let now = 0;
    const held = heldSource();
    const bg = backgroundLog();
    const tiers = cachedTierLookup(held.source, { now: () => now, random: () => 0 });
    const first = tiers.tierOf(db, "u1", bg.keep);
    held.answer("premium");
    await first;
    now = TIER_FRESH_MS + TIER_STALE_MS + 1;
    let answered: Tier | undefined;
    const later = tiers.tierOf(db, "u1", bg.keep).then((t) => (answered = t));
    await Promise.resolve();
    expect(answered).toBeUndefined();
    held.answer("standard");
    await later;
    expect(answered).toBe("standard");
    expect(bg.count()).toBe(0);
  });

  it("reads again after forget, and does not cache a read that was under way when the tier was forgotten", async () => {
    const held = heldSource();
    const bg = backgroundLog();
    const tiers = cachedTierLookup(held.source, { now: () => 0, random: () => 0 });
    // A request looks the tier up while the payment commits and the route forgets the entry.
    const racing = tiers.tierOf(db, "u1", bg.keep);
    tiers.forget("u1");
    // The next request does not join the read that began before the payment.
    const next = tiers.tierOf(db, "u1", bg.keep);
    held.answer("standard");
    expect(await racing).toBe("standard");
    held.answer("premium");
    expect(await next).toBe("premium");
    expect(await tiers.tierOf(db, "u1", bg.keep)).toBe("premium");
    expect(held.reads()).toBe(2);
  });
});
