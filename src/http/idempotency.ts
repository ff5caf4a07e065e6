import { z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { ApiError } from "../errors";
import { loggedError } from "../platform/logged-error";
import { sha256Hex } from "../platform/hash";
import { nowAndThen } from "../platform/ids";
import { claimKey, completeKey, purgeExpiredKeys, releaseKey, type IdempotencyHandle } from "../services/idempotency/keys";
import { principalOf } from "./auth";
import { defer } from "./defer";
import type { AppEnv } from "./env";

const KEY = /^[\x21-\x7e]{1,255}$/;

/** The request header of every route behind `idempotent`, for its OpenAPI declaration. */
export const IdempotencyHeader = z.object({
  "idempotency-key": z.string().optional().openapi({ description: "Retry-safe key: the same key and body replay the first answer" }),
});

/**
 * `Idempotency-Key` as Stripe has it: the same key and body replay the first response and the
 * effect happens once; the same key with another body, or while the first is in flight, is 409.
 * Services that move money complete the key inside their own transaction (see
 * `c.var.idempotency`); any other answer is recorded here, except that a 5xx frees the key so
 * the client may retry, unless the error says the effect may exist anyway (`effectMayExist`: a
 * provider call whose outcome is unknown). Such an error is replayed like any other answer, as
 * Stripe replays its 500s: a retry must not send a second payment request to the payer. These
 * writes come after the answer is made and never change it (see `bookkeeping`).
 */
export const idempotent: MiddlewareHandler<AppEnv> = async (c, next) => {
  const key = c.req.header("idempotency-key");
  if (key === undefined) return next();
  if (!KEY.test(key)) {
    throw new ApiError("invalid_input", "Idempotency-Key must be 1 to 255 visible ASCII characters", {
      details: [{ path: "(header) idempotency-key", message: "1 to 255 visible ASCII characters" }],
    });
  }
  const { db, deps } = c.var;
  const userId = principalOf(c).userId;
  const fingerprint = await sha256Hex(`${c.req.method} ${c.req.path}\n${canonicalBody(await c.req.text())}`);
  const now = deps.clock.now();
  const claim = await claimKey(db, { userId, key, fingerprint, now });
  if (claim.state === "replay") {
    return c.json(claim.body as object, claim.status as 200, { "Idempotent-Replayed": "true" });
  }
  const handle: IdempotencyHandle = { userId, key, claimedAt: claim.claimedAt };
  // Now and then a claim also sweeps keys past their retention.
  if (nowAndThen(deps.random)) defer(c, purgeExpiredKeys(db, now), "idempotency key purge");

  c.set("idempotency", handle);
  await next();
  const status = c.res.status;
  if (status >= 500 && !(c.error instanceof ApiError && c.error.effectMayExist)) {
    await bookkeeping(c, "idempotency key not released", status, () => releaseKey(db, handle));
    return;
  }
  if (handle.recordedStatus === status) return;
  const body = await c.res.clone().json().catch(() => null);
  await bookkeeping(c, "idempotency key not recorded", status, () => completeKey(db, handle, status, body, deps.clock.now()));
};

const BOOKKEEPING_ATTEMPTS = 2;

/**
 * A write about the key after the service has answered. It never replaces the answer: the client
 * gets what the service computed. A terminated backend or a lost connection fails one pooled
 * connection, so the write is tried once more (both writes are conditional on this request's own
 * claim, so a second try after a first that did land changes nothing). Should both fail, the key
 * stays in flight until a retry takes it over (STALE_IN_FLIGHT_MS), and the log says so.
 */
async function bookkeeping(c: Context<AppEnv>, failure: string, status: number, write: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      if (attempt < BOOKKEEPING_ATTEMPTS) continue;
      c.var.deps.logger.warn(failure, { requestId: c.var.requestId, status, attempts: attempt, err: loggedError(err) });
      return;
    }
  }
}

/**
 * The body as the request means it: JSON with its object keys sorted and no white space, so a
 * retry that serialises the same values differently is the same request. A body that is not
 * JSON is taken as it came (the route refuses it anyway).
 */
export function canonicalBody(text: string): string {
  if (text === "") return text;
  try {
    return JSON.stringify(sortKeys(JSON.parse(text)));
  } catch {
    // Not JSON, or nested too deep to walk: as it came.
    return text;
  }
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  // Without a prototype, a "__proto__" member is kept as the member it is.
  const sorted: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const name of Object.keys(value).sort()) sorted[name] = sortKeys((value as Record<string, unknown>)[name]);
  return sorted;
}
