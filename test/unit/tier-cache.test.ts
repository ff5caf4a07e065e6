import { describe, expect, it } from "vitest";
import type { Db } from "../../src/db/port";
import { cachedTierLookup, type Tier } from "../../src/services/tiers/port";

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

describe("the per-instance tier cache", () => {
  it("reads the source once within its TTL and again after it", async () => {
    let now = 0;
    const held = heldSource();
    const tiers = cachedTierLookup(held.source, () => now, 30_000);
    const first = tiers.tierOf(db, "u1");
    held.answer("standard");
    expect(await first).toBe("standard");
    expect(await tiers.tierOf(db, "u1")).toBe("standard");
    expect(held.reads()).toBe(1);
    now = 30_001;
    const later = tiers.tierOf(db, "u1");
    held.answer("premium");
    expect(await later).toBe("premium");
    expect(held.reads()).toBe(2);
  });

  it("reads again after forget, and does not cache a read that was under way when the tier was forgotten", async () => {
    const held = heldSource();
    const tiers = cachedTierLookup(held.source, () => 0, 30_000);
    // A request looks the tier up while the payment commits and the route forgets the entry.
    const racing = tiers.tierOf(db, "u1");
    tiers.forget("u1");
    held.answer("standard");
    expect(await racing).toBe("standard");
    // The stale answer was not kept: the next request reads the new tier.
    const next = tiers.tierOf(db, "u1");
    held.answer("premium");
    expect(await next).toBe("premium");
    expect(await tiers.tierOf(db, "u1")).toBe("premium");
    expect(held.reads()).toBe(2);
  });
});
