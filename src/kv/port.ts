/**
 * The key-value store port. Three adapters implement it: in-memory (embedded default, single
 * instance only), a TCP Redis client on Node, and Upstash's REST API on Workers. One contract
 * suite (test/integration/kv-contract.test.ts) runs against all three.
 */
export interface SetOptions {
  /** Time to live in milliseconds. */
  ttlMs?: number;
  /** Only set when the key does not exist yet. */
  onlyIfAbsent?: boolean;
}

export interface ScoredMember {
  member: string;
  score: number;
}

/**
 * A Lua script plus an equivalent for the in-memory adapter, which has no Lua engine. Both
 * sides must behave the same; the contract suite runs every script of the platform on all
 * adapters to prove it. Scripts only touch the keys they are given.
 */
export interface KvScript<T> {
  /** Stable name, used in logs and metrics. */
  name: string;
  lua: string;
  memory: (store: MemoryScriptApi, keys: string[], args: string[]) => T;
  /** Converts the raw Redis reply (arrays, integers, strings) into T. */
  parse: (raw: unknown) => T;
}

/** The synchronous operations an in-memory script may use; it runs atomically. */
export interface MemoryScriptApi {
  get(key: string): string | null;
  set(key: string, value: string, ttlMs?: number): void;
  del(key: string): void;
  incrBy(key: string, by: number): number;
  pexpire(key: string, ttlMs: number): void;
  pttl(key: string): number;
  zadd(key: string, score: number, member: string): void;
  zrem(key: string, member: string): void;
  zremRangeByScore(key: string, min: number, max: number): number;
  zcard(key: string): number;
  zrangeWithScores(key: string, start: number, stop: number): ScoredMember[];
}

export interface KeyValueStore {
  readonly kind: "memory" | "redis" | "upstash";
  get(key: string): Promise<string | null>;
  /** Returns false when onlyIfAbsent was set and the key already existed. */
  set(key: string, value: string, options?: SetOptions): Promise<boolean>;
  del(...keys: string[]): Promise<number>;
  /** Atomic increment; when ttlMs is given and the key is new, it expires after ttlMs. */
  incr(key: string, by?: number, ttlMs?: number): Promise<number>;
  /** Remaining time to live in ms; -1 without expiry, -2 when the key does not exist. */
  pttl(key: string): Promise<number>;
  zadd(key: string, score: number, member: string): Promise<void>;
  zincrby(key: string, by: number, member: string): Promise<number>;
  zscore(key: string, member: string): Promise<number | null>;
  zrem(key: string, member: string): Promise<number>;
  /** Highest scores first, ranks start..stop inclusive (0-based). */
  zrevrangeWithScores(key: string, start: number, stop: number): Promise<ScoredMember[]>;
  /** Runs a script atomically in one round trip. */
  eval<T>(script: KvScript<T>, keys: string[], args: (string | number)[]): Promise<T>;
  /** Returns the number of subscribers that received the message. */
  publish(channel: string, message: string): Promise<number>;
  /**
   * Receives every later publish on the channel (the key prefix applies to channels as to keys);
   * resolves once the subscription is active, to the function that ends it. Optional: Upstash's
   * REST API cannot hold a subscription, so callers must work without it (e.g. by polling).
   */
  subscribe?(channel: string, handler: (message: string) => void): Promise<() => void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
