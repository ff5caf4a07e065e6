import { and, eq, gt, sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { plans, subscriptions } from "../../db/schema";
import { subscriptionCharges } from "../../db/tables/finance";
import { ApiError } from "../../errors";
import type { Principal } from "../../auth/principal";
import { DAY_MS, type Clock } from "../../platform/clock";
import { completeKeyWithEffect } from "../idempotency/keys";
import type { MoneyContext } from "../wallet/context";
import { SUBSCRIPTION_REVENUE_ACCOUNT, ensureWallet, postTransaction } from "../wallet/ledger";
import { TIERS, type Tier, type TierLookup } from "../tiers/port";

export interface Plan {
  id: Tier;
  name: string;
  priceCoins: number;
  periodDays: number;
  description: string;
}

export async function listPlans(db: Db): Promise<Plan[]> {
  const rows = await db.select().from(plans).orderBy(plans.priceCoins);
  return rows.map((r) => ({ ...r, id: r.id as Tier }));
}

export interface CurrentSubscription {
  subscriptionId: string | null;
  planId: Tier;
  tier: Tier;
  status: "active" | "free";
  currentPeriodStart: string | null;
  currentPeriodEnd: string | null;
}

export async function currentSubscription(db: Db, userId: string, now: number): Promise<CurrentSubscription> {
  const [row] = await db
    .select()
    .from(subscriptions)
    .where(and(eq(subscriptions.userId, userId), gt(subscriptions.currentPeriodEnd, new Date(now))));
  if (!row) return { subscriptionId: null, planId: "standard", tier: "standard", status: "free", currentPeriodStart: null, currentPeriodEnd: null };
  const tier = row.planId as Tier;
  return {
    subscriptionId: row.id,
    planId: tier,
    tier,
    status: "active",
    currentPeriodStart: row.currentPeriodStart.toISOString(),
    currentPeriodEnd: row.currentPeriodEnd.toISOString(),
  };
}

export interface SubscribeResult extends CurrentSubscription {
  chargedCoins: number;
  balance: number;
}

/**
 * Pays the plan's price from the wallet and starts or extends the subscription in one
 * transaction: not enough coins leaves both untouched. Buying the plan you hold adds a period
 * after the current one; buying another plan replaces the current period from now on.
 */
export async function subscribe(m: MoneyContext, actor: Principal, planId: string): Promise<SubscribeResult> {
  if (planId === "standard") throw new ApiError("invalid_input", "standard is the free plan; paid plans are premium and enterprise", { details: [{ path: "planId", message: "choose a paid plan" }] });
  const [plan] = await m.db.select().from(plans).where(eq(plans.id, planId));
  if (!plan) throw new ApiError("not_found", "no such plan");
  const now = new Date(m.now);
  const period = plan.periodDays * DAY_MS;
  return m.db.transaction(async (tx) => {
    const wallet = await ensureWallet(tx, actor.userId, m.ids);
    const transactionId = m.ids.next("txn");
    const balances = await postTransaction(tx, {
      id: transactionId,
      type: "subscription",
      at: now,
      note: `${plan.name} plan, ${plan.periodDays} days`,
      actorUserId: actor.userId,
      postings: [
        { accountId: wallet, amount: -plan.priceCoins },
        { accountId: SUBSCRIPTION_REVENUE_ACCOUNT, amount: plan.priceCoins },
      ],
    });
    await tx.insert(subscriptionCharges).values({ transactionId, userId: actor.userId, planId: plan.id, coins: plan.priceCoins, createdAt: now });
    const [row] = await tx
      .insert(subscriptions)
      .values({ id: m.ids.next("sub"), userId: actor.userId, planId: plan.id, currentPeriodStart: now, currentPeriodEnd: new Date(m.now + period), createdAt: now, updatedAt: now })
      .onConflictDoUpdate({
        target: subscriptions.userId,
        set: {
          currentPeriodStart: sql`case when ${subscriptions.planId} = ${plan.id} and ${subscriptions.currentPeriodEnd} > ${now} then ${subscriptions.currentPeriodStart} else ${now} end`,
          // Hours, not days: a day interval follows the session's time zone across a DST change,
          // and a renewal is exactly periodDays × 24 h like a new subscription.
          currentPeriodEnd: sql`case when ${subscriptions.planId} = ${plan.id} and ${subscriptions.currentPeriodEnd} > ${now}
                                 then ${subscriptions.currentPeriodEnd} + ${`${plan.periodDays * 24} hours`}::interval
                                 else ${new Date(m.now + period)} end`,
          planId: plan.id,
          updatedAt: now,
        },
      })
      .returning();
    if (!row) throw new Error("subscription upsert returned no row");
    const result: SubscribeResult = {
      subscriptionId: row.id,
      planId: plan.id as Tier,
      tier: plan.id as Tier,
      status: "active",
      currentPeriodStart: row.currentPeriodStart.toISOString(),
      currentPeriodEnd: row.currentPeriodEnd.toISOString(),
      chargedCoins: plan.priceCoins,
      balance: balances.get(wallet) ?? 0,
    };
    if (m.idempotency) await completeKeyWithEffect(tx, m.idempotency, 201, result, m.now);
    return result;
  });
}

/** The rate limiter's tier: an active paid subscription (until its period ends), or standard. */
export function subscriptionTierLookup(clock: Clock): TierLookup {
  return {
    async tierOf(db, userId) {
      const [row] = await db
        .select({ planId: subscriptions.planId, currentPeriodEnd: subscriptions.currentPeriodEnd })
        .from(subscriptions)
        .where(and(eq(subscriptions.userId, userId), gt(subscriptions.currentPeriodEnd, new Date(clock.now()))));
      const tier = row?.planId as Tier | undefined;
      return row && tier && TIERS.includes(tier) ? { tier, until: row.currentPeriodEnd.getTime() } : { tier: "standard", until: null };
    },
  };
}
