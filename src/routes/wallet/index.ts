import { z } from "@hono/zod-openapi";
import { principalOf } from "../../http/auth";
import { IdempotencyHeader, idempotent } from "../../http/idempotency";
import { createRouter, jsonBody } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { moneyContext } from "../../http/service-context";
import { history, leaderboard, overview } from "../../services/wallet/history";
import { awardCoins, transfer } from "../../services/wallet/transfers";

const Coins = z.number().int().positive().max(Number.MAX_SAFE_INTEGER).openapi({ description: "Whole coins (1 coin = 1 US cent)", example: 100 });
const UserId = z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, "a user id");

const Overview = z
  .object({ walletId: z.string(), userId: z.string(), balance: z.number().int(), coins: z.number().int(), tier: z.enum(["standard", "premium", "enterprise"]) })
  .openapi("WalletOverview");
const TransferInput = z.object({ toUserId: UserId, amount: Coins, note: z.string().max(280).optional() }).strict().openapi("TransferInput");
const TransferResult = z.object({ success: z.boolean(), balance: z.number().int(), transferredAmount: z.number().int() }).openapi("TransferResult");
const AwardInput = z.object({ userId: UserId, amount: Coins, reason: z.string().trim().min(1).max(280) }).strict().openapi("AwardInput");
const AwardResult = z.object({ success: z.boolean(), balance: z.number().int(), awardedAmount: z.number().int() }).openapi("AwardResult");
const HistoryEntry = z
  .object({
    id: z.string(),
    type: z.enum(["transfer", "award", "subscription", "funding", "voucher"]),
    amount: z.number().int(),
    direction: z.enum(["credit", "debit"]),
    signedAmount: z.number().int(),
    counterparty: z.object({ kind: z.enum(["user", "mint", "subscription_revenue"]), userId: z.string().nullable(), displayName: z.string().nullable() }),
    balanceAfter: z.number().int(),
    note: z.string().nullable(),
    createdAt: z.string(),
  })
  .openapi("WalletTransaction");
const Page = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(64).optional(),
});
const LeaderboardQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).max(10_000).default(0),
});
const LeaderboardBody = z
  .object({
    entries: z.array(z.object({ rank: z.number().int(), userId: z.string(), displayName: z.string(), coins: z.number().int() })),
    nextOffset: z.number().int().nullable(),
  })
  .openapi("Leaderboard");

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

export const walletRoutes = createRouter()
  .openapi(
    protectedRoute("user", {
      method: "get",
      path: "/api/v1/wallet/overview",
      tags: ["wallet"],
      summary: "Balance and tier",
      responses: { 200: json(Overview, "The caller's wallet") },
    }),
    async (c) => {
      const p = principalOf(c);
      const { tier } = await c.var.runtime.tierSource.tierOf(c.var.db, p.userId);
      return c.json(await overview(c.var.db, c.var.deps.ids, p.userId, tier), 200);
    },
  )
  .openapi(
    protectedRoute("user", {
      method: "post",
      path: "/api/v1/wallet/transfer",
      tags: ["wallet"],
      summary: "Send coins to another person",
      middleware: [idempotent],
      request: { headers: IdempotencyHeader, body: jsonBody(TransferInput) },
      responses: {
        200: json(TransferResult, "Transferred"),
        404: { description: "No such recipient" },
        409: { description: "Idempotency-Key reused with another body, or still in flight" },
        422: { description: "Not enough coins (insufficient_funds)" },
        503: { description: "A wallet of the transfer stayed locked by another transaction for 2 s; retry (Retry-After)" },
      },
    }),
    async (c) => c.json(await transfer(moneyContext(c), principalOf(c), c.req.valid("json")), 200),
  )
  .openapi(
    protectedRoute("admin", {
      method: "post",
      path: "/api/v1/wallet/coins/award",
      tags: ["wallet"],
      summary: "Award coins (admin)",
      middleware: [idempotent],
      request: { headers: IdempotencyHeader, body: jsonBody(AwardInput) },
      responses: { 200: json(AwardResult, "Awarded"), 404: { description: "No such user" }, 409: { description: "The member deleted their account, or an idempotency conflict" } },
    }),
    async (c) => c.json(await awardCoins(moneyContext(c), principalOf(c), c.req.valid("json")), 200),
  )
  .openapi(
    protectedRoute("user", {
      method: "get",
      path: "/api/v1/wallet/leaderboard",
      tags: ["wallet"],
      summary: "Top members by coins (refreshed every 30 s)",
      request: { query: LeaderboardQuery },
      responses: { 200: json(LeaderboardBody, "One page of the board") },
    }),
    async (c) => {
      const { limit, offset } = c.req.valid("query");
      return c.json(await leaderboard(c.var.db, c.var.deps.kv, principalOf(c).userId, limit, offset), 200);
    },
  )
  .openapi(
    protectedRoute("user", {
      method: "get",
      path: "/api/v1/wallet/transactions",
      tags: ["wallet"],
      summary: "The caller's coin history, newest first",
      request: { query: Page },
      responses: { 200: json(z.object({ transactions: z.array(HistoryEntry), nextCursor: z.string().nullable() }), "One page") },
    }),
    async (c) => {
      const { limit, cursor } = c.req.valid("query");
      return c.json(await history(c.var.db, principalOf(c).userId, limit, cursor), 200);
    },
  );
