import { Redis } from "ioredis";
import type { KeyValueStore } from "../kv/port";
import { evalWithFallback, parseScore, toScoredMembers, type ScriptShas } from "../kv/scripts";

/**
 * Callers (rate limiting above all) fail open when a call rejects, so a down or unreachable
 * Redis must reject within about a second instead of queueing calls forever. ioredis fails
 * the queued calls after every second failed reconnect (maxRetriesPerRequest + 1), so the
 * wait is bounded by two reconnect delays plus two connect timeouts.
 */
const CONNECT_TIMEOUT_MS = 1_000;
const COMMAND_TIMEOUT_MS = 2_000;
const MAX_RECONNECT_DELAY_MS = 500;
/** How long calls fail at once after a command timed out on a connection that stays open. */
const HUNG_OPEN_MS = 5_000;

export interface RedisStoreOptions {
  url: string;
  prefix?: string;
  /** Tests shorten these two. */
  commandTimeoutMs?: number;
  hungOpenMs?: number;
}

export function createRedisStore(options: RedisStoreOptions): KeyValueStore {
  const prefix = options.prefix ?? "";
  const k = (key: string) => prefix + key;
  const redis = new Redis(options.url, {
    connectTimeout: CONNECT_TIMEOUT_MS,
    commandTimeout: options.commandTimeoutMs ?? COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    // Kept on so calls made while the first connection is still opening wait for it; the
    // retry limit above is what bounds the wait when Redis is down.
    enableOfflineQueue: true,
    retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
    // Not ioredis's auto-pipelining: it keeps one batch in flight per connection, so every
    // command waits for the previous batch's replies (see coalesceWrites).
    enableAutoPipelining: false,
  });
  const coalesce = coalesceWrites(redis);
  // Without a listener ioredis prints every failed reconnect; callers see the failure as a
  // rejected call instead.
  redis.on("error", () => {});

  // Pub/sub needs a connection of its own (a subscribed connection takes no other commands). It
  // is opened on the first subscribe only, and carries every channel of this store: handlers
  // are fanned out here, and a channel is unsubscribed when its last handler leaves.
  let subscriber: Redis | undefined;
  const handlers = new Map<string, Set<(message: string) => void>>();
  const subscriberConnection = (): Redis => {
    if (subscriber) return subscriber;
    subscriber = redis.duplicate();
    subscriber.on("error", () => {});
    subscriber.on("message", (channel: string, message: string) => {
      for (const handler of [...(handlers.get(channel) ?? [])]) {
        try {
          handler(message);
        } catch {
          // One failing subscriber must not starve the others.
        }
      }
    });
    return subscriber;
  };

  const shas: ScriptShas = new WeakMap();
  const store: KeyValueStore = {
    kind: "redis",
    get: (key) => redis.get(k(key)),
    async set(key, value, opts = {}) {
      const ttl = opts.ttlMs === undefined ? [] : (["PX", opts.ttlMs] as const);
      const nx = opts.onlyIfAbsent ? (["NX"] as const) : [];
      const reply = await redis.call("SET", k(key), value, ...ttl, ...nx);
      return reply === "OK";
    },
    del: (...keys) => (keys.length === 0 ? Promise.resolve(0) : redis.del(...keys.map(k))),
    async incr(key, by = 1, ttlMs) {
      if (ttlMs === undefined) return redis.incrby(k(key), by);
      // SET NX only creates the counter (with its expiry) when it is new; MULTI keeps the pair
      // atomic and in one round trip.
      const replies = await redis.multi().set(k(key), "0", "PX", ttlMs, "NX").incrby(k(key), by).exec();
      if (!replies) throw new Error("KV incr transaction was aborted");
      for (const [error] of replies) if (error) throw error;
      return Number(replies[1]?.[1]);
    },
    pttl: (key) => redis.pttl(k(key)),
    async zadd(key, score, member) {
      await redis.zadd(k(key), score, member);
    },
    zincrby: async (key, by, member) => parseScore(await redis.zincrby(k(key), by, member)),
    async zscore(key, member) {
      const raw = await redis.zscore(k(key), member);
      return raw === null ? null : parseScore(raw);
    },
    zrem: (key, member) => redis.zrem(k(key), member),
    zrevrangeWithScores: async (key, start, stop) =>
      toScoredMembers(await redis.zrevrange(k(key), start, stop, "WITHSCORES")),
    eval(script, keys, args) {
      const argv = [...keys.map(k), ...args];
      return evalWithFallback(script, {
        evalsha: (sha) => redis.evalsha(sha, keys.length, ...argv),
        eval: (lua) => redis.eval(lua, keys.length, ...argv),
     }, shas);
    },
    publish: (channel, message) => redis.publish(k(channel), message),
    async subscribe(channel, handler) {
      const key = k(channel);
      const sub = subscriberConnection();
      let set = handlers.get(key);
      if (!set) {
        set = new Set();
        handlers.set(key, set);
      }
      set.add(handler);
      try {
        // ioredis resubscribes by itself after a reconnect.
        await sub.subscribe(key);
      } catch (err) {
        set.delete(handler);
        if (set.size === 0 && handlers.get(key) === set) handlers.delete(key);
        throw err;
      }
      let active = true;
      return () => {
        if (!active) return;
        active = false;
        set.delete(handler);
        if (set.size === 0 && handlers.get(key) === set) {
          handlers.delete(key);
          void sub.unsubscribe(key).catch(() => {});
        }
      };
    },
    async ping() {
      await redis.ping();
    },
    async close() {
      handlers.clear();
      subscriber?.disconnect();
      // QUIT would wait in the offline queue of a client that never connected.
      if (redis.status === "ready") await redis.quit().catch(() => redis.disconnect());
      else redis.disconnect();
    },
  };
  const hung = hungBreaker(options.hungOpenMs ?? HUNG_OPEN_MS);
  return failFastWhileDown(store, () => redis.status === "reconnecting" || redis.status === "end" || redis.status === "close" || hung.open(), coalesce, hung);
}

/**
 * A Redis that stops answering without closing the connection (paused, overloaded, a network
 * path that drops packets) costs every call the full command timeout, and a request that touches
 * the store several times pays it several times. After a call times out, calls fail at once for
 * `openMs`; then one call goes through as a probe while the rest still fail at once, and its
 * answer closes the breaker (its timeout opens it again).
 */
function hungBreaker(openMs: number): { open(): boolean; settled(ok: boolean, err?: unknown): void } {
  let openUntil = 0;
  let probing = false;
  return {
    open() {
      if (openUntil === 0) return false;
      if (probing || Date.now() < openUntil) return true;
      probing = true;
      return false;
    },
    settled(ok, err) {
      if (ok) {
        openUntil = 0;
        probing = false;
      } else if (err instanceof Error && err.message === "Command timed out") {
        openUntil = Date.now() + openMs;
        probing = false;
      } else if (probing) {
        // The probe failed some other way (a script error, say): Redis answered, so it is back.
        openUntil = 0;
        probing = false;
      }
    },
  };
}

/**
 * Commands issued in the same event-loop turn (many requests at once) leave in one write
 * instead of one system call each: the first command of a turn corks the socket and the turn's
 * end uncorks it. Order and replies are unchanged, and, unlike ioredis's auto-pipelining, a
 * turn's commands do not wait for the replies of the turn before: under load that wait queued
 * every store call behind the slowest batch in flight (measured: the feed's p95 and CPU per
 * request both lower without it).
 */
function coalesceWrites(redis: Redis): () => void {
  let corked = false;
  return () => {
    const socket = redis.stream;
    if (corked || redis.status !== "ready" || !socket) return;
    corked = true;
    socket.cork();
    setImmediate(() => {
      corked = false;
      socket.uncork();
    });
  };
}

/**
 * Once a connection attempt has failed, calls reject at once until Redis is back, instead of
 * each waiting out reconnects: a request that touches the store several times would otherwise
 * pay that wait several times while the limiter fails open. A call that goes ahead runs
 * `beforeCall` first (the write coalescing).
 */
function failFastWhileDown(store: KeyValueStore, down: () => boolean, beforeCall: () => void, outcome: { settled(ok: boolean, err?: unknown): void }): KeyValueStore {
  const guarded: Record<string, unknown> = { kind: store.kind };
  const succeeded = <T>(value: T): T => {
    outcome.settled(true);
    return value;
  };
  const failed = (err: unknown): never => {
    outcome.settled(false, err);
    throw err;
  };
  for (const [name, value] of Object.entries(store)) {
    if (typeof value !== "function" || name === "close") {
      guarded[name] = value;
      continue;
    }
    // Subscriptions have a connection of their own, which says nothing about this one's health.
    const reports = name !== "subscribe";
    guarded[name] = (...args: unknown[]) => {
      if (down()) return Promise.reject(new Error("redis unavailable (reconnecting or not answering)"));
      beforeCall();
      const call = (value as (...a: unknown[]) => Promise<unknown>)(...args);
      return reports ? call.then(succeeded, failed) : call;
    };
  }
  return guarded as unknown as KeyValueStore;
}
