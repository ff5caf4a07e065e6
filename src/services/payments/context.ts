import type { Config } from "../../config";
import type { Db } from "../../db/port";
import type { AppDeps } from "../../deps";

export type Provider = "card-a" | "card-b" | "crypto" | "mobile-money";

/** What the payment services need: the request's database session plus the outside world. */
export interface PaymentDeps {
  db: Db;
  config: Config;
  fetch: typeof fetch;
  clock: AppDeps["clock"];
  ids: AppDeps["ids"];
  random: AppDeps["random"];
  kv: AppDeps["kv"];
  logger: AppDeps["logger"];
  /** The request's Idempotency-Key, when it sent one (see store.ts createPending). */
  idempotencyKey?: string;
}

/** The same from the app's deps and a session of its own (the scheduled reconciliation; requests: src/http/service-context.ts). */
export function paymentDepsOf(deps: AppDeps, db: Db): PaymentDeps {
  return { db, config: deps.config, fetch: deps.fetch, clock: deps.clock, ids: deps.ids, random: deps.random, kv: deps.kv, logger: deps.logger };
}
