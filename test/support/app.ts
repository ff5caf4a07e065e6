import { createApp } from "../../src/app";
import { parseConfig } from "../../src/config";
import type { Database } from "../../src/db/port";
import type { AppDeps } from "../../src/deps";
import type { KeyValueStore } from "../../src/kv/port";
import { fixedClock, systemClock, type Clock } from "../../src/platform/clock";
import { createIdGenerator, webRandom } from "../../src/platform/ids";
import { configuredSecrets, createJsonLogger } from "../../src/platform/logger";
import { createOidcVerifier } from "../../src/auth/tokens";
import { readApiReferenceScript } from "../../src/node/api-reference-script";
import type { TierLookup } from "../../src/services/tiers/port";
import type { TestIssuer } from "./issuer";
import { appStore } from "./redis";
import { checkResponse, responseContracts } from "./response-contract";

export interface TestAppOptions {
  database: Database;
  /**
   * Defaults to the real Redis under a key prefix of this app's own (test/support/redis.ts). A test
   * that passes the in-process store says why next to it.
   */
  kv?: KeyValueStore;
  clock?: Clock;
  env?: Record<string, string>;
  fetch?: typeof fetch;
  /** The loopback OIDC issuer whose tokens the app trusts; without one, no token verifies. */
  issuer?: TestIssuer;
  tierLookup?: TierLookup;
  /** Further ports of the app (blob store, resolver, …) a test wants to control. */
  deps?: Partial<AppDeps>;
}

export interface TestApp {
  app: ReturnType<typeof createApp>;
  deps: AppDeps;
  /** Every log line the app wrote, parsed. */
  logs: Record<string, unknown>[];
  request(path: string, init?: RequestInit): Promise<Response>;
}

/** Builds the app exactly as the entries do (createApp over deps), with a log sink tests can read. */
export function buildTestApp(options: TestAppOptions): TestApp {
  const logs: Record<string, unknown>[] = [];
  const config = parseConfig({
    NODE_ENV: "test",
    LOG_LEVEL: "debug",
    OIDC_ISSUER: options.issuer?.url ?? "http://127.0.0.1:9",
    OIDC_AUDIENCE: options.issuer?.audience ?? "none",
    ...options.env,
  });
  const clock = options.clock ?? systemClock;
  const kv = options.kv ?? appStore();
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const logger = createJsonLogger({ level: "debug", sink: (line) => logs.push(JSON.parse(line) as Record<string, unknown>), clock: () => clock.now(), secrets: configuredSecrets(config) });
  const deps: AppDeps = {
    config,
    database: options.database,
    kv,
    clock,
    random: webRandom,
    ids: createIdGenerator(clock, webRandom),
    logger,
    fetch: fetchImpl,
    tokenVerifier: createOidcVerifier({
      issuer: config.OIDC_ISSUER as string,
      audience: config.OIDC_AUDIENCE as string,
      rolesClaim: config.OIDC_ROLES_CLAIM,
      clock,
      fetch: fetchImpl,
      kv,
      logger,
    }),
    tierLookup: options.tierLookup,
    apiReferenceScript: readApiReferenceScript,
    ...options.deps,
  };
  const app = createApp(deps);
  const contracts = responseContracts(app);
  return {
    app,
    deps,
    logs,
    request: async (path, init) => {
      const res = await app.request(path, init);
      await checkResponse(contracts, init?.method ?? "GET", path, res);
      return res;
    },
  };
}

export { fixedClock };
