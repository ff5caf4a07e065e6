import type { Context } from "hono";
import type { PaymentDeps } from "../services/payments/context";
import type { MoneyContext } from "../services/wallet/context";
import type { AppEnv } from "./env";

/** What the money services need from a request: its database session, clock, limits and key. */
export function moneyContext(c: Context<AppEnv>): MoneyContext {
  const { db, deps } = c.var;
  return { db, ids: deps.ids, now: deps.clock.now(), maxTransfer: deps.config.WALLET_MAX_TRANSFER, idempotency: c.var.idempotency };
}

/** What the payment services need from a request: its database session, the outside world and its Idempotency-Key. */
export function paymentDeps(c: Context<AppEnv>): PaymentDeps {
  const { deps, db } = c.var;
  const idempotencyKey = c.get("idempotency")?.key;
  return { db, config: deps.config, fetch: deps.fetch, clock: deps.clock, ids: deps.ids, random: deps.random, kv: deps.kv, logger: deps.logger, ...(idempotencyKey ? { idempotencyKey } : {}) };
}
