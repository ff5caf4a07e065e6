import type { Config } from "./config";
import type { Database } from "./db/port";
import type { KeyValueStore } from "./kv/port";
import type { Clock } from "./platform/clock";
import type { IdGenerator, Random } from "./platform/ids";
import type { Logger } from "./platform/logger";

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
}
