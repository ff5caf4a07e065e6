import type { Db } from "../../db/port";
import type { IdGenerator } from "../../platform/ids";
import type { IdempotencyHandle } from "../idempotency/keys";

/** What the money services need from a request. */
export interface MoneyContext {
  db: Db;
  ids: IdGenerator;
  now: number;
  maxTransfer: number;
  idempotency?: IdempotencyHandle;
}
