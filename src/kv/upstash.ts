import { Redis, type Requester, type UpstashRequest, type UpstashResponse } from "@upstash/redis";
import type { KeyValueStore } from "./port";
import { evalWithFallback, parseScore, toScoredMembers, type ScriptShas } from "./scripts";

/**
 * Callers (rate limiting above all) fail open when a call rejects, so a slow or unreachable
 * Upstash must reject within a few seconds; the stock transport retries five times with
 * exponential backoff instead.
 */
const REQUEST_TIMEOUT_MS = 3_000;

export interface UpstashStoreOptions {
  url: string;
  token: string;
  prefix?: string;
  /** Outbound HTTP; defaults to the global fetch. */
  fetch?: typeof fetch;
}

/**
 * The client builds the commands, pipelines and MULTI/EXEC; the transport is ours because the
 * client's own has no way to take an injected fetch. Its only hook for that is a Requester,
 * which skips auto-pipelining, so each call is one request (MULTI/EXEC included).
 */
class RawRedis extends Redis {
  constructor(requester: Requester) {
    super(requester);
    // Values are opaque strings here, but the default would JSON.parse "123" into 123 and
    // "null" into null. The Requester constructor takes no options, hence setting it here.
    this.opts = { automaticDeserialization: false };
  }
}

export function createUpstashStore(options: UpstashStoreOptions): KeyValueStore {
  const prefix = options.prefix ?? "";
  const k = (key: string) => prefix + key;
  const redis = new RawRedis(createRequester(options));
  // With automaticDeserialization off the client returns raw replies whatever its types say
  // (scores as strings, for one), so replies are read as unknown.
  const raw = (reply: Promise<unknown>): Promise<unknown> => reply;

  const shas: ScriptShas = new WeakMap();
  return {
    kind: "upstash",
    async get(key) {
      const value = await raw(redis.get(k(key)));
      return value === null ? null : String(value);
    },
    async set(key, value, opts = {}) {
      const { ttlMs, onlyIfAbsent } = opts;
      const reply =
        ttlMs === undefined
          ? await redis.set(k(key), value, onlyIfAbsent ? { nx: true } : undefined)
          : await redis.set(k(key), value, onlyIfAbsent ? { px: ttlMs, nx: true } : { px: ttlMs });
      return reply === "OK";
    },
    del: async (...keys) => (keys.length === 0 ? 0 : Number(await redis.del(...keys.map(k)))),
    async incr(key, by = 1, ttlMs) {
      if (ttlMs === undefined) return Number(await redis.incrby(k(key), by));
      // SET NX only creates the counter (with its expiry) when it is new; MULTI/EXEC keeps the
      // pair atomic and in one request.
      const [, value] = await redis.multi().set(k(key), "0", { px: ttlMs, nx: true }).incrby(k(key), by).exec();
      return Number(value);
    },
    pttl: async (key) => Number(await redis.pttl(k(key))),
    async zadd(key, score, member) {
      await redis.zadd(k(key), { score, member });
    },
    zincrby: async (key, by, member) => parseScore(await raw(redis.zincrby(k(key), by, member))),
    async zscore(key, member) {
      const score = await raw(redis.zscore(k(key), member));
      return score === null ? null : parseScore(score);
    },
    zrem: async (key, member) => Number(await redis.zrem(k(key), member)),
    zrevrangeWithScores: async (key, start, stop) =>
      toScoredMembers(await raw(redis.zrange(k(key), start, stop, { rev: true, withScores: true }))),
    eval(script, keys, args) {
      const prefixed = keys.map(k);
      return evalWithFallback(script, {
        evalsha: (sha) => redis.evalsha(sha, prefixed, args),
        eval: (lua) => redis.eval(lua, prefixed, args),
     }, shas);
    },
    publish: async (channel, message) => Number(await redis.publish(k(channel), message)),
    async ping() {
      await redis.ping();
    },
    // Plain HTTP requests: there is no connection to close.
    close: async () => {},
  };
}

/** The Upstash REST protocol: POST a JSON command (or a list of them to /pipeline, /multi-exec). */
function createRequester(options: UpstashStoreOptions): Requester {
  const base = options.url.replace(/\/+$/, "");
  // Called through a wrapper: Workers throw "Illegal invocation" for a detached global fetch.
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const requester: Requester = {
    readYourWrites: true,
    upstashSyncToken: "",
    async request<TResult>(req: UpstashRequest): Promise<UpstashResponse<TResult>> {
      const response = await doFetch([base, ...(req.path ?? [])].join("/"), {
        method: "POST",
        headers: {
          authorization: `Bearer ${options.token}`,
          "content-type": "application/json",
          // Replies may hold bytes that are not valid UTF-8 and would not survive JSON as text.
          "upstash-encoding": "base64",
          // With read replicas, this makes a read see this client's earlier writes.
          ...(requester.upstashSyncToken ? { "upstash-sync-token": requester.upstashSyncToken } : {}),
          ...req.headers,
        },
        body: JSON.stringify(req.body),
        signal: req.signal ?? AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await response.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new Error(`Upstash answered HTTP ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`);
      }
      requester.upstashSyncToken = response.headers.get("upstash-sync-token") ?? requester.upstashSyncToken;
      if (!response.ok) {
        const error = (body as { error?: unknown } | null)?.error;
        throw new Error(typeof error === "string" ? error : `Upstash answered HTTP ${response.status}`);
      }
      const decodeEntry = (entry: unknown) => {
        const { result, error } = (entry ?? {}) as { result?: unknown; error?: string };
        return { result: decodeReply(result) as TResult, error };
      };
      return (Array.isArray(body) ? body.map(decodeEntry) : decodeEntry(body)) as UpstashResponse<TResult>;
    },
  };
  return requester;
}

// Mirrors the stock client: "OK" may come back unencoded, and a string that is not base64
// is passed through rather than failing the call.
function decodeReply(value: unknown, nested = false): unknown {
  if (typeof value === "string") return !nested && value === "OK" ? value : base64ToUtf8(value);
  if (Array.isArray(value)) return value.map((item) => decodeReply(item, true));
  return value;
}

function base64ToUtf8(value: string): string {
  try {
    return new TextDecoder().decode(Uint8Array.from(atob(value), (c) => c.charCodeAt(0)));
  } catch {
    return value;
  }
}
