import { createApp } from "../../src/app";
import { parseConfig } from "../../src/config";
import type { Database } from "../../src/db/port";
import type { AppDeps } from "../../src/deps";
import { createMemoryStore } from "../../src/kv/memory";
import type { KeyValueStore } from "../../src/kv/port";
import { fixedClock, systemClock, type Clock } from "../../src/platform/clock";
import { createIdGenerator, webRandom } from "../../src/platform/ids";
import { createJsonLogger } from "../../src/platform/logger";

export interface TestAppOptions {
  database: Database;
  kv?: KeyValueStore;
  clock?: Clock;
  env?: Record<string, string>;
  fetch?: typeof fetch;
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
  const config = parseConfig({ NODE_ENV: "test", LOG_LEVEL: "debug", ...options.env });
  const clock = options.clock ?? systemClock;
  const deps: AppDeps = {
    config,
    database: options.database,
    kv: options.kv ?? createMemoryStore({ clock }),
    clock,
    random: webRandom,
    ids: createIdGenerator(clock, webRandom),
    logger: createJsonLogger({ level: "debug", sink: (line) => logs.push(JSON.parse(line) as Record<string, unknown>), clock: () => clock.now() }),
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
  };
  const app = createApp(deps);
  return {
    app,
    deps,
    logs,
    request: (path, init) => Promise.resolve(app.request(path, init)),
  };
}

export { fixedClock };
