import { describe, expect, it } from "vitest";
import type { Db } from "../../src/db/port";
import type { KeyValueStore } from "../../src/kv/port";
import { createMemoryStore } from "../../src/kv/memory";
import { createJsonLogger } from "../../src/platform/logger";
import { cachedTierLookup, TIER_CHANGES_CHANNEL, TIER_FRESH_LISTENING_MS, TIER_FRESH_MS, TIER_STALE_MS, type Tier, type TierAnswer } from "../../src/services/tiers/port";
import { waitFor } from "../support/wait";

const db = {} as Db;

/** A tier source whose answers the test releases one at a time. */
function heldSource() {
  const waiting: ((answer: TierAnswer) => void)[] = [];
  let reads = 0;
  return {
    source: {
      tierOf: () => {
        reads += 1;
        return new Promise<TierAnswer>((resolve) => waiting.push(resolve));
      },
    },
    answer: (tier: Tier, until: number | null = null) => waiting.shift()?.({ tier, until }),
    reads: () => reads,
  };
}

/** Collects the refreshes the cache hands to the request's background (waitUntil on Workers). */
function backgroundLog() {
  const work: Promise<unknown>[] = [];
  return { keep: (p: Promise<unknown>) => void work.push(p), count: () => work.length, settled: () => Promise.all(work) };
}

/** A store that cannot subscribe, as Upstash over REST (Workers). */
function storeWithoutSubscribe(): KeyValueStore {
  const { subscribe: _none, ...rest } = createMemoryStore();
  return rest;
}

const logLines: string[] = [];
const logger = createJsonLogger({ sink: (line) => logLines.push(line) });
/**
 * A store that tells the test when the cache has seen its subscription start, and when a message
 * has reached the cache's handler. The test's own handler on the subscribe promise is attached one
 * microtask after the cache's, so it runs after the cache has marked itself listening.
 */
function watchedStore(kv: KeyValueStore) {
  let started: Promise<void> | undefined;
  const delivered: string[] = [];
  const store: KeyValueStore = {
    ...kv,
    subscribe: (channel, onMessage) => {
      const subscription = kv.subscribe!(channel, (message) => {
        onMessage(message);
        delivered.push(message);
      });
      started = Promise.resolve().then(() => subscription.then(() => undefined));
      return subscription;
    },
  };
  return {
    store,
    subscribed: async () => {
      if (!started) throw new Error("the cache has not subscribed");
      await started;
    },
    delivered: (count: number) => waitFor(`${count} change message(s) at the cache`, () => delivered.length >= count),
  };
}

/**
 * A tier cache over a held source, on a clock the test moves, with no jitter (random 0: an entry
 * is fresh for exactly its lifetime); `lookup` asks for user u1 as a request would.
 */
function setup(kv: KeyValueStore = storeWithoutSubscribe()) {
  const clock = { now: 0 };
  const held = heldSource();
  const bg = backgroundLog();
  const tiers = cachedTierLookup(held.source, { now: () => clock.now, random: () => 0, kv, logger });
  return { clock, held, bg, tiers, lookup: () => tiers.tierOf(db, "u1", bg.keep) };
}

/** The lookup waits for the source in the foreground: pending until it answers, then its answer, nothing left to the background. */
async function expectForegroundRead(later: Promise<Tier>, { held, bg }: ReturnType<typeof setup>): Promise<void> {
  expect(await pending(later)).toBe(true);
  held.answer("standard");
  expect(await later).toBe("standard");
  expect(bg.count()).toBe(0);
}

/** Whether the promise is still pending once the microtasks queued so far have run. */
async function pending(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await Promise.resolve();
  return !settled;
}

describe("the per-instance tier cache", () => {
  it("reads the source once while fresh, answers the old tier while a stale entry is re-read, then the new one", async () => {
    const { clock, held, bg, lookup } = setup();
    const first = lookup();
    held.answer("standard");
    expect(await first).toBe("standard");
    expect(await lookup()).toBe("standard");
    expect(held.reads()).toBe(1);

    clock.now = TIER_FRESH_MS + 1;
    // Stale: answered at once from memory, one re-read in the background, shared by later callers.
    expect(await lookup()).toBe("standard");
    expect(await lookup()).toBe("standard");
    expect(held.reads()).toBe(2);
    expect(bg.count()).toBe(1);
    held.answer("premium");
    await bg.settled();
    expect(await lookup()).toBe("premium");
    expect(held.reads()).toBe(2);
  });

  it("makes the caller wait for the source past the stale window", async () => {
    const cache = setup();
    const { clock, held, lookup } = cache;
    const first = lookup();
    held.answer("premium", 10 * TIER_STALE_MS);
    await first;
    clock.now = TIER_FRESH_MS + TIER_STALE_MS + 1;
    await expectForegroundRead(lookup(), cache);
  });

  it("ends a paid tier's entry at its period end: the next caller waits for the source instead of getting the old tier", async () => {
    const cache = setup();
    const { clock, held, lookup } = cache;
    const first = lookup();
    held.answer("premium", 5_000);
    expect(await first).toBe("premium");
    clock.now = 4_999;
    expect(await lookup()).toBe("premium");
    expect(held.reads()).toBe(1);
    clock.now = 5_000;
    await expectForegroundRead(lookup(), cache);
  });

  it("reads again after a change here, and does not cache a read that was under way when the tier changed", async () => {
    const { held, bg, tiers, lookup } = setup();
    // A request looks the tier up while the payment commits and the route reports the change.
    const racing = lookup();
    tiers.changed("u1", bg.keep);
    // The next request does not join the read that began before the payment.
    const next = lookup();
    held.answer("standard");
    expect(await racing).toBe("standard");
    held.answer("premium");
    expect(await next).toBe("premium");
    expect(await lookup()).toBe("premium");
    expect(held.reads()).toBe(2);
  });

  it("hears of a change made on another instance through the store, and then keeps entries fresh for longer", async () => {
    const kv = createMemoryStore();
    const watched = watchedStore(kv);
    const { clock, held, bg, lookup } = setup(watched.store);
    const elsewhere = setup(kv);
    // The first lookup starts listening; an entry kept once the subscription is active is fresh
    // for TIER_FRESH_LISTENING_MS instead of TIER_FRESH_MS.
    const first = lookup();
    await watched.subscribed();
    held.answer("standard");
    await first;
    clock.now = TIER_FRESH_LISTENING_MS - 1;
    expect(await lookup()).toBe("standard");
    expect(held.reads()).toBe(1);

    // The other instance takes a payment: this one drops its entry when the message arrives.
    elsewhere.tiers.changed("u1", elsewhere.bg.keep);
    await elsewhere.bg.settled();
    await watched.delivered(1);
    const next = lookup();
    expect(held.reads()).toBe(2);
    held.answer("premium");
    expect(await next).toBe("premium");
    expect(bg.count()).toBe(0);
  });

  it("keeps the short lifetime while the store cannot subscribe, and publishes changes all the same", async () => {
    const kv = createMemoryStore();
    const heard: string[] = [];
    await kv.subscribe(TIER_CHANGES_CHANNEL, (m) => heard.push(m));
    const { clock, held, bg, tiers, lookup } = setup({ ...kv, subscribe: () => Promise.reject(new Error("connection refused")) });
    const first = lookup();
    held.answer("standard");
    await first;
    await waitFor("the subscribe failure in the log", () => logLines.some((l) => l.includes("tier changes: subscribe failed")));
    clock.now = TIER_FRESH_MS + 1;
    expect(await lookup()).toBe("standard");
    expect(held.reads()).toBe(2);
    held.answer("standard");
    tiers.changed("u2", bg.keep);
    await bg.settled();
    await waitFor("the published change", () => heard.length > 0);
    expect(heard).toEqual(["u2"]);
  });
});
