import { describe, expect, it } from "vitest";
import { createSwrCache, unitFrom } from "../../src/platform/swr-cache";
import { waitFor } from "../support/wait";

const FRESH = 30_000;
const STALE = 300_000;

function counting() {
  const loads: string[] = [];
  return { loads, load: (key: string, value = `v-${key}`) => async () => (loads.push(key), value) };
}

describe("the stale-while-revalidate cache", () => {
  it("spreads the fresh lifetimes of entries filled together over the last fifth of freshMs", async () => {
    let now = 0;
    const draws = [0, 0.5, 0.999];
    let next = 0;
    const cache = createSwrCache<string>({ freshMs: FRESH, staleMs: STALE, maxEntries: 100, now: () => now, random: () => draws[next++] as number });
    const src = counting();
    const refreshes: string[] = [];
    const get = (key: string) => cache.get(key, src.load(key), () => void refreshes.push(key));
    for (const key of ["a", "b", "c"]) await get(key);
    // Fresh until: a 30 s (draw 0), b 27 s (0.5), c just over 24 s (0.999).
    now = 24_100;
    for (const key of ["a", "b", "c"]) await get(key);
    expect(refreshes).toEqual(["c"]);
    now = 27_100;
    for (const key of ["a", "b"]) await get(key);
    expect(refreshes).toEqual(["c", "b"]);
    now = 30_100;
    await get("a");
    expect(refreshes).toEqual(["c", "b", "a"]);
  });

  it("runs one load for callers that miss the same key together, and they share its answer", async () => {
    const cache = createSwrCache<string>({ freshMs: FRESH, staleMs: STALE, maxEntries: 100, now: () => 0, random: () => 0 });
    let release: (v: string) => void = () => {};
    let loads = 0;
    const load = () => {
      loads += 1;
      return new Promise<string>((resolve) => (release = resolve));
    };
    const waiting = [cache.get("k", load, () => {}), cache.get("k", load, () => {}), cache.get("k", load, () => {})];
    release("one");
    expect(await Promise.all(waiting)).toEqual(["one", "one", "one"]);
    expect(loads).toBe(1);
  });

  it("joins a load another caller started for joinMs at most, then starts its own (a cancelled Worker request's load never settles)", async () => {
    const cache = createSwrCache<string>({ freshMs: FRESH, staleMs: STALE, maxEntries: 100, now: () => 0, random: () => 0, joinMs: 20 });
    void cache.get("k", () => new Promise<string>(() => {}), () => {});
    const started = performance.now();
    expect(await cache.get("k", async () => "own", () => {})).toBe("own");
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
    // The answer was kept: the next caller is served from memory.
    expect(await cache.get("k", () => Promise.reject(new Error("not read again")), () => {})).toBe("own");
  });

  it("keeps answering a stale entry when its refresh fails, and hands the failure to the background", async () => {
    let now = 0;
    const cache = createSwrCache<string>({ freshMs: FRESH, staleMs: STALE, maxEntries: 100, now: () => now, random: () => 0 });
    await cache.get("k", async () => "old", () => {});
    now = FRESH + 1;
    const failures: unknown[] = [];
    let refresh: Promise<unknown> = Promise.resolve();
    const answer = await cache.get("k", () => Promise.reject(new Error("database down")), (work) => void (refresh = work.catch((err: unknown) => failures.push(err))));
    expect(answer).toBe("old");
    await refresh;
    expect(failures).toHaveLength(1);
    // The next request tries the refresh again, still answered from memory.
    expect(await cache.get("k", async () => "new", (work) => void (refresh = work))).toBe("old");
    await refresh;
    expect(await cache.get("k", async () => "newer", () => {})).toBe("new");
  });

  it("lets the caller see a failed load when it has nothing to answer with", async () => {
    let now = 0;
    const cache = createSwrCache<string>({ freshMs: FRESH, staleMs: STALE, maxEntries: 100, now: () => now, random: () => 0 });
    await expect(cache.get("k", () => Promise.reject(new Error("database down")), () => {})).rejects.toThrow("database down");
    await cache.get("k", async () => "v", () => {});
    now = FRESH + STALE + 1;
    await expect(cache.get("k", () => Promise.reject(new Error("database down")), () => {})).rejects.toThrow("database down");
  });

  it("starts over when full instead of growing past maxEntries", async () => {
    const cache = createSwrCache<string>({ freshMs: FRESH, staleMs: STALE, maxEntries: 2, now: () => 0, random: () => 0 });
    const src = counting();
    for (const key of ["a", "b", "c", "a"]) await cache.get(key, src.load(key), () => {});
    // c found the cache full and cleared it, so a was read again.
    expect(src.loads).toEqual(["a", "b", "c", "a"]);
  });

  it("draws uniform values in [0, 1) from random bytes", () => {
    const draw = unitFrom(() => new Uint8Array([255, 255]));
    expect(draw()).toBeLessThan(1);
    expect(unitFrom(() => new Uint8Array([0, 0]))()).toBe(0);
    expect(unitFrom(() => new Uint8Array([128, 0]))()).toBe(0.5);
  });
});
