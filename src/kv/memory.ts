import { systemClock, type Clock } from "../platform/clock";
import type { Logger } from "../platform/logger";
import type { KeyValueStore, MemoryScriptApi, ScoredMember } from "./port";

export type MessageHandler = (message: string) => void;

export interface MemoryStore extends KeyValueStore {
  readonly kind: "memory";
  /** Receives every later publish on the channel (prefixed like publish); resolves to the unsubscribe. */
  subscribe(channel: string, handler: MessageHandler): Promise<() => void>;
  /** Keys held right now, expired ones not swept yet included; for tests and metrics. */
  size(): number;
  /**
   * Every live key with what it holds (a string, or a sorted set's members), prefix included; for
   * tests that prove nothing about a person is left.
   */
  contents(): { key: string; value: string }[];
}

type Entry =
  | { type: "string"; value: string; expiresAt: number | null }
  | { type: "zset"; members: Map<string, number>; expiresAt: number | null };

// Expired keys nobody reads again would stay forever with lazy expiry alone. A timer would
// keep Node alive and is not allowed at global scope on Workers, so the sweep piggybacks on
// calls instead.
const SWEEP_INTERVAL_MS = 30_000;

const WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value";
const NOT_INTEGER = "ERR value is not an integer or out of range";

export function createMemoryStore(options: { prefix?: string; clock?: Clock; logger?: Logger } = {}): MemoryStore {
  const prefix = options.prefix ?? "";
  const clock = options.clock ?? systemClock;
  const data = new Map<string, Entry>();
  const subscribers = new Map<string, Set<MessageHandler>>();
  let lastSweep = clock.now();

  const sweepIfDue = (now: number) => {
    if (now - lastSweep < SWEEP_INTERVAL_MS) return;
    lastSweep = now;
    for (const [key, entry] of data) if (entry.expiresAt !== null && entry.expiresAt <= now) data.delete(key);
  };

  const live = (key: string): Entry | undefined => {
    const entry = data.get(key);
    if (entry?.expiresAt != null && entry.expiresAt <= clock.now()) {
      data.delete(key);
      return undefined;
    }
    return entry;
  };

  const zsetOf = (key: string, create: boolean): Map<string, number> | undefined => {
    const entry = live(key);
    if (entry?.type === "zset") return entry.members;
    if (entry) throw new Error(WRONGTYPE);
    if (!create) return undefined;
    const members = new Map<string, number>();
    data.set(key, { type: "zset", members, expiresAt: null });
    return members;
  };

  // Redis deletes a sorted set together with its last member.
  const dropIfEmpty = (key: string, members: Map<string, number>) => {
    if (members.size === 0) data.delete(key);
  };

  // Redis orders equal scores by member; subtraction would give NaN for two infinite scores.
  const compare = (a: ScoredMember, b: ScoredMember) =>
    a.score !== b.score ? (a.score < b.score ? -1 : 1) : a.member < b.member ? -1 : a.member > b.member ? 1 : 0;
  const sorted = (members: Map<string, number>): ScoredMember[] =>
    [...members].map(([member, score]) => ({ member, score })).sort(compare);

  // Redis rank semantics: negative ranks count from the end, out-of-range ranks are clamped.
  const slice = (list: ScoredMember[], start: number, stop: number): ScoredMember[] => {
    const len = list.length;
    const from = Math.max(start < 0 ? start + len : start, 0);
    const to = Math.min(stop < 0 ? stop + len : stop, len - 1);
    return from > to ? [] : list.slice(from, to + 1);
  };

  const api: MemoryScriptApi = {
    get(key) {
      const entry = live(key);
      if (entry && entry.type !== "string") throw new Error(WRONGTYPE);
      return entry ? entry.value : null;
    },
    set(key, value, ttlMs) {
      // Redis takes PX as a positive integer only; the twin refuses what Redis refuses.
      if (ttlMs !== undefined && !(Number.isInteger(ttlMs) && ttlMs > 0)) throw new Error("ERR invalid expire time in 'set' command");
      data.set(key, { type: "string", value, expiresAt: ttlMs === undefined ? null : clock.now() + ttlMs });
    },
    del(key) {
      data.delete(key);
    },
    incrBy(key, by) {
      if (!Number.isSafeInteger(by)) throw new Error(NOT_INTEGER);
      const entry = live(key);
      if (entry && entry.type !== "string") throw new Error(WRONGTYPE);
      const current = entry ? entry.value : "0";
      if (!/^-?\d+$/.test(current)) throw new Error(NOT_INTEGER);
      const next = Number(current) + by;
      if (!Number.isSafeInteger(next)) throw new Error("ERR increment or decrement would overflow");
      data.set(key, { type: "string", value: String(next), expiresAt: entry ? entry.expiresAt : null });
      return next;
    },
    pexpire(key, ttlMs) {
      const entry = live(key);
      if (!entry) return;
      if (ttlMs <= 0) data.delete(key);
      else entry.expiresAt = clock.now() + ttlMs;
    },
    pttl(key) {
      const entry = live(key);
      if (!entry) return -2;
      return entry.expiresAt === null ? -1 : entry.expiresAt - clock.now();
    },
    zadd(key, score, member) {
      zsetOf(key, true)!.set(member, score);
    },
    zrem(key, member) {
      const members = zsetOf(key, false);
      if (!members) return;
      members.delete(member);
      dropIfEmpty(key, members);
    },
    zremRangeByScore(key, min, max) {
      const members = zsetOf(key, false);
      if (!members) return 0;
      let removed = 0;
      for (const [member, score] of members) {
        if (score >= min && score <= max) {
          members.delete(member);
          removed++;
        }
      }
      dropIfEmpty(key, members);
      return removed;
    },
    zcard(key) {
      return zsetOf(key, false)?.size ?? 0;
    },
    zrangeWithScores(key, start, stop) {
      const members = zsetOf(key, false);
      return members ? slice(sorted(members), start, stop) : [];
    },
  };

  // Every operation runs synchronously inside one call, which is what makes eval atomic here.
  const run = async <T>(op: () => T): Promise<T> => {
    sweepIfDue(clock.now());
    return op();
  };
  const k = (key: string) => prefix + key;

  return {
    kind: "memory",
    get: (key) => run(() => api.get(k(key))),
    set: (key, value, opts = {}) =>
      run(() => {
        if (opts.onlyIfAbsent && live(k(key))) return false;
        api.set(k(key), value, opts.ttlMs);
        return true;
      }),
    del: (...keys) =>
      run(() => {
        let removed = 0;
        for (const key of keys) if (live(k(key)) && data.delete(k(key))) removed++;
        return removed;
      }),
    incr: (key, by = 1, ttlMs) =>
      run(() => {
        const isNew = !live(k(key));
        const value = api.incrBy(k(key), by);
        if (isNew && ttlMs !== undefined) api.pexpire(k(key), ttlMs);
        return value;
      }),
    pttl: (key) => run(() => api.pttl(k(key))),
    zadd: (key, score, member) => run(() => api.zadd(k(key), score, member)),
    zincrby: (key, by, member) =>
      run(() => {
        const members = zsetOf(k(key), true)!;
        const score = (members.get(member) ?? 0) + by;
        members.set(member, score);
        return score;
      }),
    zscore: (key, member) => run(() => zsetOf(k(key), false)?.get(member) ?? null),
    zrem: (key, member) =>
      run(() => {
        const had = zsetOf(k(key), false)?.has(member) ?? false;
        api.zrem(k(key), member);
        return had ? 1 : 0;
      }),
    zrevrangeWithScores: (key, start, stop) =>
      run(() => {
        const members = zsetOf(k(key), false);
        return members ? slice(sorted(members).reverse(), start, stop) : [];
      }),
    eval: (script, keys, args) => run(() => script.memory(api, keys.map(k), args.map(String))),
    publish: (channel, message) =>
      run(() => {
        const handlers = [...(subscribers.get(k(channel)) ?? [])];
        // Delivered after the publisher resumes, as with Redis, and isolated: a failing
        // subscriber must not fail the publisher or starve the other subscribers.
        for (const handler of handlers) {
          queueMicrotask(() => {
            try {
              handler(message);
            } catch (error) {
              if (options.logger) options.logger.error("kv subscriber failed", { channel, error: String(error) });
              else console.error("kv subscriber failed", channel, error);
            }
          });
        }
        return handlers.length;
      }),
    subscribe(channel, handler) {
      const key = k(channel);
      const set = subscribers.get(key) ?? new Set<MessageHandler>();
      set.add(handler);
      subscribers.set(key, set);
      return Promise.resolve(() => {
        set.delete(handler);
        if (set.size === 0 && subscribers.get(key) === set) subscribers.delete(key);
      });
    },
    ping: () => run(() => undefined),
    close: async () => {
      data.clear();
      subscribers.clear();
    },
    size: () => data.size,
    contents: () =>
      [...data.keys()].flatMap((key) => {
        const entry = live(key);
        if (!entry) return [];
        return [{ key, value: entry.type === "string" ? entry.value : [...entry.members.keys()].join("\n") }];
      }),
  };
}
