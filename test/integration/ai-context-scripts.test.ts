import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryStore } from "../../src/kv/memory";
import type { KeyValueStore } from "../../src/kv/port";
import { createUpstashStore } from "../../src/kv/upstash";
import { createRedisStore } from "../../src/node/kv-redis";
import { contextReadScript, contextStoreScript } from "../../src/services/ai/context-cache";
import { TEST_REDIS_URL, randomSuffix } from "../support/services";
import { startUpstashRestServer } from "../support/upstash-rest-server";
import { testRedis, type TestRedis } from "../support/redis";

const TOKEN = "upstash-test-token";
let upstash: { url: string; close(): Promise<void> };
let redis: TestRedis;

beforeAll(async () => {
  upstash = await startUpstashRestServer({ redisUrl: TEST_REDIS_URL, token: TOKEN });
  redis = testRedis();
});
afterAll(async () => {
  await Promise.all([upstash.close(), redis.cleanup()]);
});

/** Reads and writes of the AI context cache, with what plain commands then see. */
async function scenario(kv: KeyValueStore): Promise<unknown[]> {
  const out: unknown[] = [];
  const read = (user: string) => kv.eval(contextReadScript, [`ai:ctx:u:${user}`, "ai:ctx:hits"], []);
  out.push(await read("a"), await kv.get("ai:ctx:hits"));
  out.push(await kv.eval(contextStoreScript, ["ai:ctx:u:a", "ai:ctx:index"], ['{"conversation":["hé 👋"]}', 600_000, 1_000_600_000, "a"]));
  out.push(await read("a"), await read("a"), await read("b"), await kv.get("ai:ctx:hits"));
  await kv.eval(contextStoreScript, ["ai:ctx:u:b", "ai:ctx:index"], ["{}", 600_000, 1_000_000_000, "b"]);
  await kv.eval(contextStoreScript, ["ai:ctx:u:a", "ai:ctx:index"], ["{}", 600_000, 1_000_900_000, "a"]);
  out.push(await kv.zrevrangeWithScores("ai:ctx:index", 0, -1), await read("a"));
  const ttl = await kv.pttl("ai:ctx:u:a");
  out.push(ttl > 590_000 && ttl <= 600_000);
  return out;
}

describe("the AI context cache scripts", () => {
  it("answer identically on the in-memory store, Redis and Upstash", async () => {
    const prefix = `${redis.prefix}${randomSuffix()}:`;
    const stores: [string, KeyValueStore][] = [
      ["memory", createMemoryStore()],
      ["redis", createRedisStore({ url: TEST_REDIS_URL, prefix: `${prefix}r:` })],
      ["upstash", createUpstashStore({ url: upstash.url, token: TOKEN, prefix: `${prefix}u:` })],
    ];
    const results: Record<string, unknown[]> = {};
    for (const [name, kv] of stores) {
      results[name] = await scenario(kv);
      await kv.close();
    }
    expect(results.memory).toEqual([
      null,
      null,
      null,
      '{"conversation":["hé 👋"]}',
      '{"conversation":["hé 👋"]}',
      null,
      "2",
      [
        { member: "a", score: 1_000_900_000 },
        { member: "b", score: 1_000_000_000 },
      ],
      "{}",
      true,
    ]);
    expect(results.redis).toEqual(results.memory);
    expect(results.upstash).toEqual(results.memory);
  });
});
