import { z } from "@hono/zod-openapi";
import { principalOf } from "../../http/auth";
import { defer } from "../../http/defer";
import { IdempotencyHeader, idempotent } from "../../http/idempotency";
import { createRouter, jsonBody } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { currentSubscription, listPlans, subscribe } from "../../services/subscriptions/subscriptions";
import { moneyContext } from "../../http/service-context";

const Tier = z.enum(["standard", "premium", "enterprise"]);
const Plan = z.object({ id: Tier, name: z.string(), priceCoins: z.number().int(), periodDays: z.number().int(), description: z.string() }).openapi("Plan");
const Current = z
  .object({
    subscriptionId: z.string().nullable(),
    planId: Tier,
    tier: Tier,
    status: z.enum(["active", "free"]),
    currentPeriodStart: z.string().nullable(),
    currentPeriodEnd: z.string().nullable(),
  })
  .openapi("Subscription");
const Subscribed = Current.extend({ chargedCoins: z.number().int(), balance: z.number().int() }).openapi("SubscribeResult");
const SubscribeInput = z.object({ planId: z.string().min(1).max(32) }).strict().openapi("SubscribeInput");
const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

export const subscriptionRoutes = createRouter()
  .openapi(
    protectedRoute("user", {
      method: "get",
      path: "/api/v1/subscriptions/plans",
      tags: ["subscriptions"],
      summary: "Available plans (prices in coins)",
      responses: { 200: json(z.object({ plans: z.array(Plan) }), "Plans, cheapest first") },
    }),
    async (c) => c.json({ plans: await listPlans(c.var.db) }, 200),
  )
  .openapi(
    protectedRoute("user", {
      method: "get",
      path: "/api/v1/subscriptions/current",
      tags: ["subscriptions"],
      summary: "The caller's subscription",
      responses: { 200: json(Current, "Active paid plan, or the free standard plan") },
    }),
    async (c) => c.json(await currentSubscription(c.var.db, principalOf(c).userId, c.var.deps.clock.now()), 200),
  )
  .openapi(
    protectedRoute("user", {
      method: "post",
      path: "/api/v1/subscriptions",
      tags: ["subscriptions"],
      summary: "Subscribe to a paid plan, paying its price from the wallet",
      middleware: [idempotent],
      request: { headers: IdempotencyHeader, body: jsonBody(SubscribeInput) },
      responses: {
        201: json(Subscribed, "Subscribed or extended"),
        404: { description: "No such plan" },
        409: { description: "Idempotency conflict" },
        422: { description: "Not enough coins (insufficient_funds); nothing changed" },
      },
    }),
    async (c) => {
      const caller = principalOf(c);
      const result = await subscribe(moneyContext(c), caller, c.req.valid("json").planId);
      c.var.runtime.tiers.changed(caller.userId, (work) => defer(c, work, "tier change notice"));
      return c.json(result, 201);
    },
  );
