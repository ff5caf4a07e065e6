import { Redis as UpstashClient } from "@upstash/redis";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryStore, type MemoryStore } from "../../src/kv/memory";
import type { KeyValueStore, KvScript } from "../../src/kv/port";
import { defineScript, scriptSha } from "../../src/kv/scripts";
import { createUpstashStore } from "../../src/kv/upstash";
import { createRedisStore } from "../../src/node/kv-redis";
import { fixedClock } from "../../src/platform/clock";
import { randomSuffix, TEST_REDIS_URL } from "../support/services";
import { startUpstashRestServer } from "../support/upstash-rest-server";

// ---------------------------------------------------------------------------------------------
// Scripts shaped like the platform's own (rate limiting); each runs on every adapter.

function pair(raw: unknown): [number, number] {
  if (!Array.isArray(raw) || typeof raw[0] !== "number" || typeof raw[1] !== "number") {
    throw new Error(`expected [number, number], got ${JSON.stringify(raw)}`);
  }
  return [raw[0], raw[1]];
}

/** ARGV: now, windowMs, cap, member. Drops entries older than the window, then admits under the cap. */
const slidingWindow = defineScript<{ allowed: boolean; count: number }>({
  name: "test.sliding-window",
  lua: `
    local key = KEYS[1]
    local now, window, cap = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
    local count = redis.call('ZCARD', key)
    if count < cap then
      redis.call('ZADD', key, ARGV[1], ARGV[4])
      redis.call('PEXPIRE', key, ARGV[2])
      return {1, count + 1}
    end
    return {0, count}`,
  memory(kv, [key], [now, window, cap, member]) {
    kv.zremRangeByScore(key!, -Infinity, Number(now) - Number(window));
    const count = kv.zcard(key!);
    if (count >= Number(cap)) return { allowed: false, count };
    kv.zadd(key!, Number(now), member!);
    kv.pexpire(key!, Number(window));
    return { allowed: true, count: count + 1 };
  },
  parse(raw) {
    const [allowed, count] = pair(raw);
    return { allowed: allowed === 1, count };
  },
});

/** ARGV: cap, ttlMs. Increments unless the counter reached the cap; the expiry starts with the counter. */
const cappedIncrement = defineScript<{ allowed: boolean; value: number }>({
  name: "test.capped-increment",
  lua: `
    local current = tonumber(redis.call('GET', KEYS[1]) or '0')
    if current >= tonumber(ARGV[1]) then return {0, current} end
    local value = redis.call('INCR', KEYS[1])
    if value == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
    return {1, value}`,
  memory(kv, [key], [cap, ttlMs]) {
    const current = Number(kv.get(key!) ?? "0");
    if (current >= Number(cap)) return { allowed: false, value: current };
    const value = kv.incrBy(key!, 1);
    if (value === 1) kv.pexpire(key!, Number(ttlMs));
    return { allowed: true, value };
  },
  parse(raw) {
    const [allowed, value] = pair(raw);
    return { allowed: allowed === 1, value };
  },
});

/** Stores ARGV[1] and returns the previous value: checks nil and non-ASCII strings both ways. */
const swap = defineScript<string | null>({
  name: "test.swap",
  lua: `
    local previous = redis.call('GET', KEYS[1])
    redis.call('SET', KEYS[1], ARGV[1])
    return previous`,
  memory(kv, [key], [value]) {
    const previous = kv.get(key!);
    kv.set(key!, value!);
    return previous;
  },
  parse: (raw) => (raw === null ? null : String(raw)),
});

/** Returns the KEYS the script saw, to prove adapters prefix them. */
const echoKeys = defineScript<string[]>({
  name: "test.echo-keys",
  lua: "return KEYS",
  memory: (_kv, keys) => keys,
  parse: (raw) => (raw as unknown[]).map(String),
});

// ---------------------------------------------------------------------------------------------
// The three adapters behind one harness.

interface Listener {
  next(): Promise<string>;
  stop(): Promise<void>;
}

interface Harness {
  name: string;
  open(prefix: string): KeyValueStore;
  /** Lets TTLs run out: memory moves its frozen clock, Redis needs real time to pass. */
  elapse(ms: number): Promise<void>;
  /** A subscriber outside the store under test, on the channel as the store names it. */
  listen(store: KeyValueStore, prefix: string, channel: string): Promise<Listener>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const UPSTASH_TOKEN = `token-${randomSuffix()}`;
let admin: Redis;
let upstash: { url: string; close(): Promise<void> };

beforeAll(async () => {
  admin = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  upstash = await startUpstashRestServer({ redisUrl: TEST_REDIS_URL, token: UPSTASH_TOKEN });
});

afterAll(async () => {
  await upstash.close();
  await admin.quit();
});

async function deleteKeys(prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await admin.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
    if (keys.length > 0) await admin.del(...keys);
    cursor = next;
  } while (cursor !== "0");
}

async function redisListener(prefix: string, channel: string): Promise<Listener> {
  const subscriber = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  const queue: string[] = [];
  const waiting: ((message: string) => void)[] = [];
  subscriber.on("message", (_channel: string, message: string) => {
    const resolve = waiting.shift();
    if (resolve) resolve(message);
    else queue.push(message);
  });
  await subscriber.subscribe(prefix + channel);
  return {
    next: () => (queue.length > 0 ? Promise.resolve(queue.shift()!) : new Promise((resolve) => waiting.push(resolve))),
    stop: async () => {
      await subscriber.quit();
    },
  };
}

function memoryHarness(): Harness {
  const clock = fixedClock(Date.UTC(2030, 0, 1));
  return {
    name: "memory",
    open: (prefix) => createMemoryStore({ prefix, clock }),
    elapse: async (ms) => clock.advance(ms),
    async listen(store, _prefix, channel) {
      const messages: string[] = [];
      const unsubscribe = await (store as MemoryStore).subscribe(channel, (message) => messages.push(message));
      return {
        next: async () => messages.shift() ?? Promise.reject(new Error("no message delivered")),
        stop: async () => unsubscribe(),
      };
    },
  };
}

const redisHarness: Harness = {
  name: "redis (ioredis)",
  open: (prefix) => createRedisStore({ url: TEST_REDIS_URL, prefix }),
  elapse: sleep,
  listen: (_store, prefix, channel) => redisListener(prefix, channel),
};

const upstashHarness: Harness = {
  name: "upstash (REST)",
  open: (prefix) => createUpstashStore({ url: upstash.url, token: UPSTASH_TOKEN, prefix }),
  elapse: sleep,
  listen: (_store, prefix, channel) => redisListener(prefix, channel),
};

/**
 * A short expiry the real stores must still honour, long enough that the steps a test takes before
 * it (a few loopback round trips, slower through the REST server on a busy machine) fit inside it.
 */
const SHORT_TTL_MS = 400;
const PAST_SHORT_TTL_MS = 500;

const newPrefix = (name: string) => `test:kv:${name.split(" ")[0]}:${randomSuffix()}:`;

/**
 * For the enclosing describe: opens a store of the harness under a fresh prefix before its tests
 * and hands it to `use`, then closes it and deletes its keys after them. Returns the prefix.
 */
function useStore(h: Harness, use: (kv: KeyValueStore) => void): string {
  const prefix = newPrefix(h.name);
  let kv: KeyValueStore | undefined;
  beforeAll(() => {
    kv = h.open(prefix);
    use(kv);
  });
  afterAll(async () => {
    await kv?.close();
    await deleteKeys(prefix);
  });
  return prefix;
}

// ---------------------------------------------------------------------------------------------

function kvContract(h: Harness): void {
  let kv: KeyValueStore;
  const prefix = useStore(h, (opened) => (kv = opened));

  it("stores and reads strings, including non-ASCII ones", async () => {
    expect(await kv.get("missing")).toBeNull();
    expect(await kv.set("greeting", "héllo ✓ 🚀")).toBe(true);
    expect(await kv.get("greeting")).toBe("héllo ✓ 🚀");
    // Values are opaque: nothing may turn them into numbers, booleans or null.
    for (const value of ["123", "null", "true", '{"a":1}', ""]) {
      await kv.set("opaque", value);
      expect(await kv.get("opaque")).toBe(value);
    }
  });

  it("expires a key set with ttlMs", async () => {
    await kv.set("short", "v", { ttlMs: SHORT_TTL_MS });
    const ttl = await kv.pttl("short");
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(SHORT_TTL_MS);
    await h.elapse(PAST_SHORT_TTL_MS);
    expect(await kv.get("short")).toBeNull();
    expect(await kv.pttl("short")).toBe(-2);
  });

  it("refuses a ttlMs that is zero, negative or fractional, as Redis does, and keeps the old value", async () => {
    await kv.set("ttl-kept", "old");
    for (const ttlMs of [0, -5, 1.5]) await expect(kv.set("ttl-kept", "new", { ttlMs })).rejects.toThrow();
    expect(await kv.get("ttl-kept")).toBe("old");
  });

  it("drops an earlier expiry when a key is set again without ttlMs", async () => {
    await kv.set("kept", "a", { ttlMs: SHORT_TTL_MS });
    await kv.set("kept", "b");
    expect(await kv.pttl("kept")).toBe(-1);
    await h.elapse(PAST_SHORT_TTL_MS);
    expect(await kv.get("kept")).toBe("b");
  });

  it("sets with onlyIfAbsent only when the key is missing or expired", async () => {
    expect(await kv.set("lock", "first", { onlyIfAbsent: true, ttlMs: SHORT_TTL_MS })).toBe(true);
    expect(await kv.set("lock", "second", { onlyIfAbsent: true })).toBe(false);
    expect(await kv.get("lock")).toBe("first");
    await h.elapse(PAST_SHORT_TTL_MS);
    expect(await kv.set("lock", "third", { onlyIfAbsent: true })).toBe(true);
    expect(await kv.get("lock")).toBe("third");
  });

  it("deletes keys and counts only those that existed", async () => {
    await kv.set("d1", "x");
    await kv.set("d2", "y");
    expect(await kv.del("d1", "d2", "d3")).toBe(2);
    expect(await kv.get("d1")).toBeNull();
    expect(await kv.del("d1")).toBe(0);
    expect(await kv.del()).toBe(0);
  });

  it("increments counters", async () => {
    expect(await kv.incr("counter")).toBe(1);
    expect(await kv.incr("counter", 5)).toBe(6);
    expect(await kv.incr("counter", -2)).toBe(4);
    expect(await kv.get("counter")).toBe("4");
    expect(await kv.pttl("counter")).toBe(-1);
  });

  it("rejects incrementing a value that is not an integer", async () => {
    await kv.set("text", "abc");
    await expect(kv.incr("text")).rejects.toThrow(/not an integer/);
  });

  it("sets the counter's expiry only when incr creates it", async () => {
    expect(await kv.incr("window", 1, SHORT_TTL_MS)).toBe(1);
    expect(await kv.pttl("window")).toBeGreaterThan(0);
    expect(await kv.incr("window", 1, 60_000)).toBe(2);
    expect(await kv.pttl("window")).toBeLessThanOrEqual(SHORT_TTL_MS);
    await h.elapse(PAST_SHORT_TTL_MS);
    expect(await kv.get("window")).toBeNull();
    expect(await kv.incr("window", 1, 60_000)).toBe(1);
    expect(await kv.pttl("window")).toBeGreaterThan(1_000);
  });

  it("reports pttl as -2 for missing keys and -1 for keys without expiry", async () => {
    expect(await kv.pttl("nothing")).toBe(-2);
    await kv.set("forever", "v");
    expect(await kv.pttl("forever")).toBe(-1);
    await kv.zadd("forever-set", 1, "m");
    expect(await kv.pttl("forever-set")).toBe(-1);
  });

  it("keeps sorted sets ordered by score, ties by member, highest first", async () => {
    await kv.zadd("board", 1, "alice");
    await kv.zadd("board", 3, "bob");
    await kv.zadd("board", 2, "carol");
    await kv.zadd("board", 2, "dave");
    await kv.zadd("board", 5, "bob");
    expect(await kv.zincrby("board", 2.5, "alice")).toBe(3.5);
    expect(await kv.zincrby("board", -1, "erin")).toBe(-1);
    expect(await kv.zscore("board", "bob")).toBe(5);
    expect(await kv.zscore("board", "nobody")).toBeNull();
    expect(await kv.zscore("no-board", "bob")).toBeNull();

    expect(await kv.zrevrangeWithScores("board", 0, -1)).toEqual([
      { member: "bob", score: 5 },
      { member: "alice", score: 3.5 },
      { member: "dave", score: 2 },
      { member: "carol", score: 2 },
      { member: "erin", score: -1 },
    ]);
    expect(await kv.zrevrangeWithScores("board", 0, 1)).toEqual([
      { member: "bob", score: 5 },
      { member: "alice", score: 3.5 },
    ]);
    expect(await kv.zrevrangeWithScores("board", -2, -1)).toEqual([
      { member: "carol", score: 2 },
      { member: "erin", score: -1 },
    ]);
    expect(await kv.zrevrangeWithScores("board", 10, 20)).toEqual([]);
    expect(await kv.zrevrangeWithScores("no-board", 0, -1)).toEqual([]);
  });

  it("removes sorted set members and the set with its last member", async () => {
    await kv.zadd("small", 1, "a");
    await kv.zadd("small", 2, "b");
    expect(await kv.zrem("small", "a")).toBe(1);
    expect(await kv.zrem("small", "a")).toBe(0);
    expect(await kv.zrevrangeWithScores("small", 0, -1)).toEqual([{ member: "b", score: 2 }]);
    expect(await kv.zrem("small", "b")).toBe(1);
    expect(await kv.pttl("small")).toBe(-2);
  });

  it("publishes to subscribers and counts them", async () => {
    expect(await kv.publish("events", "nobody listens")).toBe(0);
    const listener = await h.listen(kv, prefix, "events");
    try {
      expect(await kv.publish("events", "hello ✓")).toBe(1);
      expect(await listener.next()).toBe("hello ✓");
    } finally {
      await listener.stop();
    }
  });

  it("runs a sliding window script", async () => {
    const t0 = 1_900_000_000_000;
    const hit = (now: number, id: string) => kv.eval(slidingWindow, ["sw"], [now, 1_000, 3, id]);
    expect(await hit(t0, "r1")).toEqual({ allowed: true, count: 1 });
    expect(await hit(t0 + 10, "r2")).toEqual({ allowed: true, count: 2 });
    expect(await hit(t0 + 20, "r3")).toEqual({ allowed: true, count: 3 });
    expect(await hit(t0 + 30, "r4")).toEqual({ allowed: false, count: 3 });
    // r1 leaves the window; the script's writes are visible to plain commands under the same key.
    expect(await hit(t0 + 1_005, "r5")).toEqual({ allowed: true, count: 3 });
    expect(await kv.zrevrangeWithScores("sw", 0, -1)).toEqual([
      { member: "r5", score: t0 + 1_005 },
      { member: "r3", score: t0 + 20 },
      { member: "r2", score: t0 + 10 },
    ]);
    const ttl = await kv.pttl("sw");
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1_000);
  });

  it("runs a capped increment script", async () => {
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await kv.eval(cappedIncrement, ["capped"], [3, 60_000]));
    expect(results).toEqual([
      { allowed: true, value: 1 },
      { allowed: true, value: 2 },
      { allowed: true, value: 3 },
      { allowed: false, value: 3 },
    ]);
    expect(await kv.get("capped")).toBe("3");
    expect(await kv.pttl("capped")).toBeGreaterThan(0);
  });

  it("passes nil and non-ASCII strings through scripts", async () => {
    expect(await kv.eval(swap, ["swapped"], ["ünïcødé 🚀"])).toBeNull();
    expect(await kv.eval(swap, ["swapped"], ["second"])).toBe("ünïcødé 🚀");
    expect(await kv.get("swapped")).toBe("second");
  });

  it("prefixes the keys a script receives", async () => {
    expect(await kv.eval(echoKeys, ["a", "b"], [])).toEqual([`${prefix}a`, `${prefix}b`]);
  });

  it("runs scripts atomically under concurrency", async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, () => kv.eval(cappedIncrement, ["concurrent"], [10, 60_000])),
    );
    expect(results.filter((r) => r.allowed)).toHaveLength(10);
    expect(results.filter((r) => r.allowed).map((r) => r.value).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 10 }, (_, i) => i + 1),
    );
    expect(await kv.get("concurrent")).toBe("10");
  });

  it("isolates stores with different prefixes", async () => {
    const otherPrefix = newPrefix(h.name);
    const other = h.open(otherPrefix);
    try {
      await kv.set("shared-name", "mine");
      expect(await other.get("shared-name")).toBeNull();
      await other.set("shared-name", "theirs");
      await other.incr("shared-counter");
      expect(await kv.get("shared-name")).toBe("mine");
      expect(await kv.get("shared-counter")).toBeNull();
      expect(await other.del("shared-name")).toBe(1);
      expect(await kv.get("shared-name")).toBe("mine");
    } finally {
      await other.close();
      await deleteKeys(otherPrefix);
    }
  });

  it("answers ping", async () => {
    await expect(kv.ping()).resolves.toBeUndefined();
  });
}

describe.each([memoryHarness(), redisHarness, upstashHarness])("KeyValueStore contract: $name", kvContract);

// ---------------------------------------------------------------------------------------------

describe.each([redisHarness, upstashHarness])("Redis-backed store: $name", (h) => {
  let kv: KeyValueStore;
  const prefix = useStore(h, (opened) => (kv = opened));

  it("writes keys under its prefix", async () => {
    await kv.set("visible", "v");
    expect(await admin.get(`${prefix}visible`)).toBe("v");
    expect(await admin.get("visible")).toBeNull();
  });

  it("falls back to EVAL when Redis lost its script cache", async () => {
    const sha = await scriptSha(cappedIncrement);
    expect(await kv.eval(cappedIncrement, ["noscript"], [5, 60_000])).toEqual({ allowed: true, value: 1 });
    await admin.script("FLUSH");
    expect(await admin.script("EXISTS", sha)).toEqual([0]);
    expect(await kv.eval(cappedIncrement, ["noscript"], [5, 60_000])).toEqual({ allowed: true, value: 2 });
    // The fallback's EVAL reloaded the script, so the next call is an EVALSHA hit again.
    expect(await admin.script("EXISTS", sha)).toEqual([1]);
    expect(await kv.eval(cappedIncrement, ["noscript"], [5, 60_000])).toEqual({ allowed: true, value: 3 });
  });

  it("surfaces script errors other than NOSCRIPT", async () => {
    const broken: KvScript<unknown> = defineScript({
      name: "test.broken",
      lua: "return redis.call('INCR', KEYS[1])",
      memory: () => null,
      parse: (raw) => raw,
    });
    await kv.set("not-a-number", "abc");
    await expect(kv.eval(broken, ["not-a-number"], [])).rejects.toThrow(/not an integer/);
  });
});

describe("all adapters", () => {
  it("give identical results for the same script calls", async () => {
    const harnesses = [memoryHarness(), redisHarness, upstashHarness];
    const outcomes = await Promise.all(
      harnesses.map(async (h) => {
        const prefix = newPrefix(h.name);
        const kv = h.open(prefix);
        try {
          const out: unknown[] = [];
          for (let i = 0; i < 6; i++) {
            out.push(await kv.eval(slidingWindow, ["w"], [1_000 + i * 400, 1_000, 2, `m${i}`]));
            out.push(await kv.eval(cappedIncrement, ["c"], [4, 60_000]));
            out.push(await kv.eval(swap, ["s"], [`v${i}`]));
          }
          out.push(await kv.zrevrangeWithScores("w", 0, -1));
          return out;
        } finally {
          await kv.close();
          await deleteKeys(prefix);
        }
      }),
    );
    expect(outcomes[1]).toEqual(outcomes[0]);
    expect(outcomes[2]).toEqual(outcomes[0]);
    expect(outcomes[0]).toContainEqual({ allowed: false, count: 2 });
  });
});

describe("unreachable backends", () => {
  it("makes ioredis calls reject quickly instead of hanging", async () => {
    const kv = createRedisStore({ url: "redis://127.0.0.1:1" });
    try {
      for (const call of [() => kv.get("k"), () => kv.eval(cappedIncrement, ["k"], [1, 1_000])]) {
        const started = Date.now();
        await expect(call()).rejects.toThrow();
        expect(Date.now() - started).toBeLessThan(2_000);
      }
    } finally {
      const started = Date.now();
      await kv.close();
      expect(Date.now() - started).toBeLessThan(1_000);
    }
  });

  it("makes Upstash calls reject quickly instead of hanging", async () => {
    const kv = createUpstashStore({ url: "http://127.0.0.1:1", token: "t" });
    const started = Date.now();
    await expect(kv.get("k")).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe("Upstash REST fake", () => {
  it("rejects a wrong bearer token with 401", async () => {
    const response = await fetch(upstash.url, {
      method: "POST",
      headers: { authorization: "Bearer wrong", "content-type": "application/json" },
      body: JSON.stringify(["PING"]),
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: "Unauthorized" });
    const kv = createUpstashStore({ url: upstash.url, token: "wrong" });
    await expect(kv.ping()).rejects.toThrow(/Unauthorized/);
  });

  it("answers /pipeline with one result or error per command", async () => {
    const response = await fetch(`${upstash.url}/pipeline`, {
      method: "POST",
      headers: { authorization: `Bearer ${UPSTASH_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify([["ECHO", "hi"], ["EVALSHA", "0".repeat(40), 0], ["INCRBY", "x", "not-a-number"]]),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { result?: unknown; error?: string }[];
    expect(body[0]).toEqual({ result: "hi" });
    expect(body[1]?.error).toMatch(/^NOSCRIPT/);
    expect(body[2]?.error).toMatch(/not an integer/);
  });

  it("speaks the protocol the stock client uses (auto-pipelining, base64, errors)", async () => {
    const prefix = newPrefix("stock");
    const client = new UpstashClient({ url: upstash.url, token: UPSTASH_TOKEN, enableTelemetry: false });
    try {
      await Promise.all([client.set(`${prefix}s`, "ünï 🚀"), client.hset(`${prefix}h`, { a: "1", b: "x" })]);
      const [value, hash] = await Promise.all([client.get(`${prefix}s`), client.hgetall(`${prefix}h`)]);
      expect(value).toBe("ünï 🚀");
      expect(hash).toEqual({ a: 1, b: "x" });
      await expect(client.evalsha("0".repeat(40), [], [])).rejects.toThrow(/NOSCRIPT/);
      const [, counter] = await client.multi().set(`${prefix}m`, 5).incr(`${prefix}m`).exec();
      expect(counter).toBe(6);
    } finally {
      await deleteKeys(prefix);
    }
  });
});

describe("memory store", () => {
  it("sweeps expired keys nobody reads again", async () => {
    const clock = fixedClock(0);
    const kv = createMemoryStore({ clock });
    for (let i = 0; i < 100; i++) await kv.set(`temp${i}`, "v", { ttlMs: 1_000 });
    await kv.set("permanent", "v");
    expect(kv.size()).toBe(101);
    clock.advance(60_000);
    await kv.ping();
    expect(kv.size()).toBe(1);
  });

  it("stops delivering after unsubscribe and isolates failing subscribers", async () => {
    const kv = createMemoryStore({ prefix: "p:", logger: { debug() {}, info() {}, warn() {}, error() {}, request() {} } });
    const received: string[] = [];
    await kv.subscribe("ch", () => {
      throw new Error("subscriber bug");
    });
    const unsubscribe = await kv.subscribe("ch", (message) => received.push(message));
    expect(await kv.publish("ch", "one")).toBe(2);
    expect(received).toEqual(["one"]);
    unsubscribe();
    expect(await kv.publish("ch", "two")).toBe(1);
    expect(received).toEqual(["one"]);
  });
});
