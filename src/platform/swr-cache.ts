import { sharedLoad, type LoadSlot } from "./shared-load";

/**
 * A per-instance cache for values every request needs (a caller's identity, their plan tier) that
 * keeps the database off the request path for callers it knows:
 * - fresh: answered from memory;
 * - stale (past fresh, within the stale window): answered from memory while one load refreshes
 *   the entry in the background;
 * - missing, or past the stale window: the caller waits for the load.
 *
 * Entries filled together (a deploy's first minute, a burst of sign-ins) would otherwise all come
 * due in the same second and send every request of that second to the database at once: fresh
 * lifetimes are spread over the last `jitter` share of `freshMs`, and a key has one load under way,
 * which every caller waiting for it shares (for joinMs at most, see sharedLoad).
 */
export interface SwrCacheOptions<V = unknown> {
  /** A function where the lifetime depends on the moment (see cachedTierLookup). */
  freshMs: number | (() => number);
  /** How long past fresh an entry may still be answered while it is refreshed. */
  staleMs: number;
  maxEntries: number;
  now: () => number;
  /** A uniform draw in [0, 1) for the jitter. */
  random: () => number;
  /** Share of freshMs over which fresh lifetimes are spread (0 to 1). */
  jitter?: number;
  /** How long a caller waits for a load another request started before starting its own. */
  joinMs?: number;
  /**
   * When a value stops being true by itself (a paid plan's period end), in ms: its entry is
   * neither fresh nor answered stale from then on, so the next caller waits for the load.
   */
  expiresAt?: (value: V) => number | null;
}

/** A database read of one row takes milliseconds; a load this old was most likely abandoned. */
const JOIN_MS = 3_000;

/** What a cache built on this one takes: the clock and draws, and its own lifetimes where a test shortens them. */
export type CacheTuning = Pick<SwrCacheOptions, "now" | "random"> & Partial<Omit<SwrCacheOptions, "now" | "random" | "expiresAt">>;

/** Keeps a refresh alive after the response (Workers' waitUntil) and reports its failure. */
export type Background = (work: Promise<unknown>) => void;

export interface SwrCache<V> {
  get(key: string, load: () => Promise<V>, background: Background): Promise<V>;
  /** Drops an entry, and keeps no load that was already under way for any key. */
  forget(key: string): void;
}

interface Entry<V> {
  value: V;
  freshUntil: number;
  staleUntil: number;
}

export function createSwrCache<V>(options: SwrCacheOptions<V>): SwrCache<V> {
  const { staleMs, maxEntries, now, random, expiresAt } = options;
  const fresh = options.freshMs;
  const freshMs = typeof fresh === "number" ? () => fresh : fresh;
  const jitter = Math.min(1, Math.max(0, options.jitter ?? 0.2));
  const joinMs = options.joinMs ?? JOIN_MS;
  const entries = new Map<string, Entry<V>>();
  // One slot per key with a load under way, shared through sharedLoad: on Workers a load begun by
  // a request that was then cancelled never settles, so a caller joins it for joinMs at most.
  const loading = new Map<string, LoadSlot<V>>();
  // A load under way when an entry is forgotten may carry the old value: it answers its callers
  // but is not kept. Forgetting is rare (a payment), so one counter serves every key.
  let generation = 0;

  const keep = (key: string, value: V, loadedAt: number) => {
    if (entries.size >= maxEntries && !entries.has(key)) entries.clear();
    const end = expiresAt?.(value) ?? Infinity;
    const freshUntil = Math.min(end, loadedAt + freshMs() * (1 - jitter * random()));
    entries.set(key, { value, freshUntil, staleUntil: Math.min(end, freshUntil + staleMs) });
  };

  const start = (key: string, load: () => Promise<V>): Promise<V> => {
    let slot = loading.get(key);
    if (!slot) {
      slot = {};
      loading.set(key, slot);
    }
    const own = slot;
    const seen = generation;
    const loadedAt = now();
    const work = sharedLoad(
      own,
      () =>
        load().then((value) => {
          if (seen === generation) keep(key, value, loadedAt);
          return value;
        }),
      { joinMs, keep: false },
    );
    const settled = () => {
      if (own.current === undefined && loading.get(key) === own) loading.delete(key);
    };
    work.then(settled, settled);
    return work;
  };

  return {
    get(key, load, background) {
      const t = now();
      const hit = entries.get(key);
      if (hit && t < hit.freshUntil) return Promise.resolve(hit.value);
      if (hit && t < hit.staleUntil) {
        if (loading.get(key)?.current === undefined) background(start(key, load));
        return Promise.resolve(hit.value);
      }
      return start(key, load);
    },
    forget(key) {
      generation += 1;
      entries.delete(key);
      loading.delete(key);
    },
  };
}

/** A uniform draw in [0, 1) from random bytes, for callers that hold only the bytes port. */
export function unitFrom(bytes: (n: number) => Uint8Array): () => number {
  return () => {
    const [a = 0, b = 0] = bytes(2);
    return (a * 256 + b) / 65_536;
  };
}
