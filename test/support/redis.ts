import { Redis } from "ioredis";
import type { KeyValueStore } from "../../src/kv/port";
import { createRedisStore } from "../../src/node/kv-redis";
import { TEST_REDIS_URL, randomSuffix } from "./services";

export interface TestRedis {
  prefix: string;
  /** A new store on the shared prefix: several "app instances" sharing one Redis. */
  store(): KeyValueStore;
  /** Deletes every key under the prefix and closes the stores. */
  cleanup(): Promise<void>;
}

/** A key namespace of its own on the real Redis, for one test or test file. */
export function testRedis(): TestRedis {
  const prefix = `test:${randomSuffix()}:`;
  const stores: KeyValueStore[] = [];
  return {
    prefix,
    store() {
      const s = createRedisStore({ url: TEST_REDIS_URL, prefix });
      stores.push(s);
      return s;
    },
    async cleanup() {
      const admin = new Redis(TEST_REDIS_URL);
      try {
        let cursor = "0";
        do {
          const [next, keys] = await admin.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
          if (keys.length) await admin.del(...keys);
          cursor = next;
        } while (cursor !== "0");
      } finally {
        admin.disconnect();
        await Promise.all(stores.map((s) => s.close()));
      }
    },
  };
}
