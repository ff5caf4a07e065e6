import { afterAll, beforeAll } from "vitest";
import { createMemoryStore } from "../../src/kv/memory";
import type { KeyValueStore } from "../../src/kv/port";
import { createUpstashStore } from "../../src/kv/upstash";
import { createRedisStore } from "../../src/node/kv-redis";
import { testRedis, type TestRedis } from "./redis";
import { TEST_REDIS_URL, randomSuffix } from "./services";
import { startUpstashRestServer } from "./upstash-rest-server";

export type StoreResults<T> = { memory: T; redis: T; upstash: T };

const TOKEN = "upstash-test-token";

/**
 * For scripts with an in-memory twin: runs one scenario on a fresh store of each adapter (memory,
 * Redis over TCP, Upstash REST in front of the same Redis), so a test can demand identical answers.
 * Registers the file's beforeAll/afterAll for the loopback REST server and the Redis keys.
 */
export function useEveryStore(): <T>(scenario: (kv: KeyValueStore) => Promise<T>) => Promise<StoreResults<T>> {
  let upstash: { url: string; close(): Promise<void> };
  let redis: TestRedis;
  beforeAll(async () => {
    upstash = await startUpstashRestServer({ redisUrl: TEST_REDIS_URL, token: TOKEN });
    redis = testRedis();
  });
  afterAll(async () => {
    await Promise.all([upstash.close(), redis.cleanup()]);
  });
  return async (scenario) => {
    const prefix = `${redis.prefix}${randomSuffix()}:`;
    const run = async (kv: KeyValueStore) => {
      try {
        return await scenario(kv);
      } finally {
        await kv.close();
      }
    };
    return {
      memory: await run(createMemoryStore()),
      redis: await run(createRedisStore({ url: TEST_REDIS_URL, prefix: `${prefix}r:` })),
      upstash: await run(createUpstashStore({ url: upstash.url, token: TOKEN, prefix: `${prefix}u:` })),
    };
  };
}
