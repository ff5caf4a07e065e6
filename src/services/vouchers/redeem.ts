import { and, eq, gt, isNull, or } from "drizzle-orm";
import type { Principal } from "../../auth/principal";
import type { Db } from "../../db/port";
import { vouchers } from "../../db/tables/vouchers";
import { ApiError } from "../../errors";
import type { KeyValueStore } from "../../kv/port";
import type { IdGenerator } from "../../platform/ids";
import type { Logger } from "../../platform/logger";
import { MINT_ACCOUNT, ensureWallet, postTransaction } from "../wallet/ledger";
import { addressLimitSubject } from "../rate-limit/address";
import { canonicalCode, codeHash } from "./codes";

/** Failed redemptions allowed per hour before further attempts answer 429. */
export const FAILURES_PER_USER = 10;
/** Per client address: higher, since people behind one address (a carrier's NAT) share it. */
export const FAILURES_PER_ADDRESS = 50;
const WINDOW_MS = 3_600_000;

export interface RedeemContext {
  db: Db;
  kv: KeyValueStore;
  ids: IdGenerator;
  logger: Logger;
  now: number;
  /** The caller's network address where the runtime knows it; the per-address limit needs it. */
  clientAddress: string | null;
}

export interface Redemption {
  voucherId: string;
  coins: number;
  balance: number;
  transactionId: string;
  redeemedAt: string;
}

/** A member's failed-redemption counter (it expires with its window; an erasure drops it sooner). */
export const failuresKeyOf = (userId: string) => `voucher-failures:user:${userId}`;

/** A client address's failed-redemption counter (deps.clientAddress, one spelling per address; IPv6 by its /64). */
export const addressFailuresKeyOf = (address: string) => `voucher-failures:addr:${addressLimitSubject(address)}`;

const counters = (ctx: RedeemContext, actor: Principal) => [
  { key: failuresKeyOf(actor.userId), limit: FAILURES_PER_USER },
  ...(ctx.clientAddress ? [{ key: addressFailuresKeyOf(ctx.clientAddress), limit: FAILURES_PER_ADDRESS }] : []),
];

/**
 * Refuses a caller who failed too often within the window. The store being down does not stop
 * redemptions: a code is 80 random bits, so the limit slows guessing that could not succeed anyway
 * rather than being what keeps codes safe.
 */
async function checkFailures(ctx: RedeemContext, actor: Principal): Promise<void> {
  try {
    for (const { key, limit } of counters(ctx, actor)) {
      const failures = Number((await ctx.kv.get(key)) ?? 0);
      if (failures >= limit) {
        const ttl = await ctx.kv.pttl(key);
        throw new ApiError("rate_limit_exceeded", "too many failed voucher redemptions; try again later", { retryAfter: Math.max(1, Math.ceil((ttl > 0 ? ttl : WINDOW_MS) / 1000)) });
      }
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    ctx.logger.warn("voucher failure limit unavailable", { error: String(err) });
  }
}

async function countFailure(ctx: RedeemContext, actor: Principal): Promise<void> {
  await Promise.all(counters(ctx, actor).map(({ key }) => ctx.kv.incr(key, 1, WINDOW_MS))).catch((err: unknown) => ctx.logger.warn("voucher failure not counted", { error: String(err) }));
}

/**
 * Credits a code's coins to the caller's wallet once. The code is looked up by its hash through
 * the unique index (no comparison of secrets in our code). The status guard on the update is what
 * makes it once: of concurrent redemptions one updates the row and the others find it redeemed
 * (409); the voucher row and the ledger posting commit together.
 */
export async function redeemVoucher(ctx: RedeemContext, actor: Principal, input: { code: string }): Promise<Redemption> {
  await checkFailures(ctx, actor);
  const canonical = canonicalCode(input.code);
  const hash = canonical === null ? null : await codeHash(canonical);
  const at = new Date(ctx.now);
  try {
    return await ctx.db.transaction(async (tx) => {
      const transactionId = ctx.ids.next("txn");
      const [won] =
        hash === null
          ? []
          : await tx
              .update(vouchers)
              .set({ status: "redeemed", redeemedBy: actor.userId, redeemedAt: at, ledgerTransactionId: transactionId })
              .where(and(eq(vouchers.codeHash, hash), eq(vouchers.status, "active"), or(isNull(vouchers.expiresAt), gt(vouchers.expiresAt, at))))
              .returning({ id: vouchers.id, coins: vouchers.coins });
      if (!won) {
        const [found] = hash === null ? [] : await tx.select({ status: vouchers.status, expiresAt: vouchers.expiresAt, redeemedBy: vouchers.redeemedBy }).from(vouchers).where(eq(vouchers.codeHash, hash));
        if (!found) throw new ApiError("not_found", "no such voucher code");
        if (found.status === "redeemed") throw new ApiError("conflict", found.redeemedBy === actor.userId ? "you already redeemed this voucher" : "the voucher was already redeemed");
        if (found.status === "revoked") throw new ApiError("conflict", "the voucher was revoked");
        throw new ApiError("conflict", "the voucher has expired");
      }
      const wallet = await ensureWallet(tx, actor.userId, ctx.ids);
      const balances = await postTransaction(tx, {
        id: transactionId,
        type: "voucher",
        at,
        note: `voucher ${won.id}`,
        actorUserId: actor.userId,
        externalRef: `voucher:${won.id}`,
        postings: [
          { accountId: MINT_ACCOUNT, amount: -won.coins },
          { accountId: wallet, amount: won.coins },
        ],
      });
      return { voucherId: won.id, coins: won.coins, balance: balances.get(wallet) ?? 0, transactionId, redeemedAt: at.toISOString() };
    });
  } catch (err) {
    if (err instanceof ApiError && (err.code === "not_found" || err.code === "conflict")) await countFailure(ctx, actor);
    throw err;
  }
}

