import type { Context } from "hono";
import type { Db } from "../../db/port";
import type { AppEnv } from "../../http/env";
import type { IdGenerator } from "../../platform/ids";
import type { IdempotencyHandle } from "../idempotency/keys";

/** What the money services need from a request. */
export interface MoneyContext {
  db: Db;
  ids: IdGenerator;
  now: number;
  maxTransfer: number;
  idempotency?: IdempotencyHandle;
  /** The request a write serves, for the audit entry of an admin's write. */
  requestId: string;
}

export function moneyContext(c: Context<AppEnv>): MoneyContext {
  const { db, deps } = c.var;
  return { db, ids: deps.ids, now: deps.clock.now(), maxTransfer: deps.config.WALLET_MAX_TRANSFER, idempotency: c.var.idempotency, requestId: c.var.requestId };
}
