import type { TokenVerifier } from "./auth/tokens";
import type { Config } from "./config";
import type { Database } from "./db/port";
import type { KeyValueStore } from "./kv/port";
import type { Clock } from "./platform/clock";
import type { IdGenerator, Random } from "./platform/ids";
import type { Logger } from "./platform/logger";
import type { TierLookup } from "./services/tiers/port";
import type { InferenceClient } from "./services/inference/types";

/** Everything the app needs from the outside world; each entry builds these and nothing else. */
export interface AppDeps {
  config: Config;
  database: Database;
  kv: KeyValueStore;
  clock: Clock;
  random: Random;
  ids: IdGenerator;
  logger: Logger;
  /** Outbound HTTP; tests point it at loopback fakes, never at a stub inside our code. */
  fetch: typeof fetch;
  /** Verifies access tokens: the OIDC issuer, or the development issuer on a local Node server. */
  tokenVerifier: TokenVerifier;
  /** Plan tier per user for rate limits; defaults to reading subscriptions. */
  tierLookup?: TierLookup;
  /** The self-hosted inference hosts; built from INFERENCE_* config over deps.fetch when absent. */
  inference?: InferenceClient;
}
