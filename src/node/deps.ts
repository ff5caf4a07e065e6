import type { Config } from "../config";
import type { AppDeps } from "../deps";
import type { KeyValueStore } from "../kv/port";
import { createMemoryStore } from "../kv/memory";
import { createUpstashStore } from "../kv/upstash";
import { systemClock } from "../platform/clock";
import { createIdGenerator, webRandom } from "../platform/ids";
import { configuredSecrets, createJsonLogger, type Logger } from "../platform/logger";
import { createPgDatabase, openPgliteDatabase, type NodeDatabase } from "./database";
import { createRedisStore } from "./kv-redis";
import { createOidcVerifier, type TokenVerifier } from "../auth/tokens";
import type { Clock } from "../platform/clock";
import { createDevVerifier } from "./dev-issuer";
import { devSignInIssuer } from "./dev-sign-in";
import { blobDirectory, createFileBlobStore } from "./file-blob-store";
import { systemResolver } from "./dns-resolver";
import { createLookupFetch } from "./asset-fetch";
import { publicOnlyLookup } from "./public-lookup";
import { readApiReferenceScript } from "./api-reference-script";
import { nodeClientAddress } from "./client-address";

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

export async function openTokenVerifier(config: Config, kv: KeyValueStore, clock: Clock, logger: Logger): Promise<TokenVerifier> {
  if (config.OIDC_ISSUER && config.OIDC_AUDIENCE) {
    return createOidcVerifier({
      issuer: config.OIDC_ISSUER,
      audience: config.OIDC_AUDIENCE,
      rolesClaim: config.OIDC_ROLES_CLAIM,
      clock,
      fetch: globalThis.fetch.bind(globalThis),
      kv,
      logger,
    });
  }
  logger.warn("OIDC_ISSUER is not set: trusting the local development issuer (npm run token -- <userId> [--admin])");
  return createDevVerifier(config, clock, devSignInIssuer(config));
}

/** Builds the Node deps from validated config; the caller owns close(). */
export async function buildNodeDeps(config: Config, logger = createJsonLogger({ level: config.LOG_LEVEL, secrets: configuredSecrets(config) })): Promise<NodeDeps> {
  const database = await openDatabase(config, logger);
  const kv = openStore(config, logger);
  const tokenVerifier = await openTokenVerifier(config, kv, systemClock, logger);
  return {
    tokenVerifier,
    config,
    database,
    kv,
    clock: systemClock,
    random: webRandom,
    ids: createIdGenerator(systemClock, webRandom),
    logger,
    fetch: globalThis.fetch.bind(globalThis),
    assetFetch: createLookupFetch(publicOnlyLookup()),
    webhookFetch: createLookupFetch(publicOnlyLookup()),
    blobs: createFileBlobStore(blobDirectory(config.DATA_DIR)),
    resolver: systemResolver,
    apiReferenceScript: readApiReferenceScript,
    clientAddress: nodeClientAddress(config.TRUSTED_PROXY_HOPS),
    async close() {
      await Promise.allSettled([kv.close(), database.close()]);
    },
  };
}
