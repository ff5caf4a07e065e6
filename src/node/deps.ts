import type { Config } from "../config";
import type { AppDeps } from "../deps";
import type { KeyValueStore } from "../kv/port";
import { createMemoryStore } from "../kv/memory";
import { createUpstashStore } from "../kv/upstash";
import { systemClock } from "../platform/clock";
import { createIdGenerator, webRandom } from "../platform/ids";
import { createJsonLogger, type Logger } from "../platform/logger";
import { createPgDatabase, openPgliteDatabase, type NodeDatabase } from "./database";
import { createRedisStore } from "./kv-redis";

export interface NodeDeps extends AppDeps {
  database: NodeDatabase;
  close(): Promise<void>;
}

export async function openDatabase(config: Config, logger: Logger): Promise<NodeDatabase> {
  return config.DATABASE_URL
    ? createPgDatabase(config.DATABASE_URL, { max: config.DATABASE_POOL_MAX, logger })
    : openPgliteDatabase(config.DATA_DIR, logger);
}

export function openStore(config: Config, logger: Logger): KeyValueStore {
  const prefix = config.KV_PREFIX;
  if (config.REDIS_URL) return createRedisStore({ url: config.REDIS_URL, prefix });
  if (config.UPSTASH_REDIS_REST_URL && config.UPSTASH_REDIS_REST_TOKEN) {
    return createUpstashStore({ url: config.UPSTASH_REDIS_REST_URL, token: config.UPSTASH_REDIS_REST_TOKEN, prefix });
  }
  logger.warn("no REDIS_URL or UPSTASH_REDIS_REST_URL: using the in-process store (single instance only)");
  return createMemoryStore({ prefix, clock: systemClock });
}

/** Builds the Node deps from validated config; the caller owns close(). */
export async function buildNodeDeps(config: Config, logger = createJsonLogger({ level: config.LOG_LEVEL })): Promise<NodeDeps> {
  const database = await openDatabase(config, logger);
  const kv = openStore(config, logger);
  return {
    config,
    database,
    kv,
    clock: systemClock,
    random: webRandom,
    ids: createIdGenerator(systemClock, webRandom),
    logger,
    fetch: globalThis.fetch.bind(globalThis),
    async close() {
      await Promise.allSettled([kv.close(), database.close()]);
    },
  };
}
