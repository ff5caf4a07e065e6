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
  const prefix = `test:${randomSuffix()}${randomSuffix()}:`;
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
        await Promise.all(stores.map((s) => s.close()));
        let cursor = "0";
        do {
          const [next, keys] = await admin.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
          if (keys.length) await admin.del(...keys);
          cursor = next;
        } while (cursor !== "0");
      } finally {
        admin.disconnect();
      }
    },
  };
}

// Namespaces handed out by appStore in this test file; vitest evaluates this module once per file,
// so the list is the file's, and the setup file (test/support/setup-redis.ts) empties it after the
// file's last test.
const appNamespaces: TestRedis[] = [];

/**
 * The store buildTestApp gives an app by default: the real Redis through the Node adapter, under a
 * key prefix of its own, so two apps (or two test files, or two people's runs) never see each
 * other's keys, as two in-process stores would not.
 */
export function appStore(): KeyValueStore {
  const namespace = testRedis();
  appNamespaces.push(namespace);
  return namespace.store();
}

/** Closes every store appStore opened in this file and deletes its keys. */
export async function cleanupAppStores(): Promise<void> {
  const namespaces = appNamespaces.splice(0);
  await Promise.all(namespaces.map((n) => n.cleanup()));
}
