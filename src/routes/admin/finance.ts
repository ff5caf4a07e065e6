import { z } from "@hono/zod-openapi";
import { principalOf } from "../../http/auth";
import { createRouter } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { financeMetrics } from "../../services/finance/metrics";

const int = () => z.number().int();
const Status = { pending: int(), completed: int(), failed: int(), expired: int() };

const FinanceMetrics = z
  .object({
    from: z.string().openapi({ description: "First day of the window (UTC), included", example: "2026-10-30" }),
    to: z.string().openapi({ description: "Last day of the window (UTC), included", example: "2026-11-28" }),
    asOf: z.string(),
    payments: z.object({
      received: z.array(
        z.object({
          provider: z.string(),
          currency: z.string(),
          count: int(),
          coins: int(),
          amount: z.string().openapi({ description: "Sum asked of the payers, in the provider's unit of the currency (card-a: minor units), as a decimal string" }),
        }),
      ),
      byProvider: z.array(z.object({ provider: z.string(), ...Status })),
      totals: z.object({ ...Status, coinsReceived: int() }),
    }),
    coins: z.object({
      minted: int(),
      mintedBySource: z.record(z.string(), int()),
      awarded: int(),
      fromPayments: int(),
      fromVouchers: int(),
      spentOnSubscriptions: int(),
      transferred: int(),
      transfers: int(),
    }),
    subscriptions: z.object({
      active: z.array(z.object({ planId: z.string(), count: int() })),
      revenue: z.array(z.object({ planId: z.string(), charges: int(), coins: int() })),
    }),
    outstanding: z.object({ coins: int().openapi({ description: "Sum of all member balances: the coins the platform owes" }), wallets: int() }),
    reconciliation: z.object({
      ok: z.boolean(),
      ledgerBalanced: z.boolean(),
      balanceSum: int(),
      unbalancedTransactions: int(),
      paymentsChecked: int(),
      missingCredits: int(),
      duplicateCredits: int(),
      amountMismatches: int(),
      creditsWithoutPayment: int(),
    }),
    series: z.array(
      z.object({
        date: z.string(),
        paymentsCompleted: int(),
        coinsReceived: int(),
        minted: int(),
        awarded: int(),
        spentOnSubscriptions: int(),
        transferred: int(),
      }),
    ),
  })
  .openapi("FinanceMetrics");

const Day = z.string().openapi({ description: "A UTC calendar day, YYYY-MM-DD", example: "2026-11-01" });

export const financeAdminRoutes = createRouter().openapi(
  protectedRoute("admin", {
    method: "get",
    path: "/api/admin/finance/metrics",
    tags: ["admin"],
    summary: "Money received, coin flows, subscriptions, outstanding coins and reconciliation over a window of UTC days (default: the last 30)",
    // Dates are checked by the service, so every malformed, reversed or too wide window gets one message style.
    request: { query: z.object({ from: Day.optional(), to: Day.optional() }) },
    responses: { 200: { description: "Figures of the window", content: { "application/json": { schema: FinanceMetrics } } } },
  }),
  async (c) => c.json(await financeMetrics(c.var.db, principalOf(c), c.req.valid("query"), c.var.deps.clock.now()), 200),
);
