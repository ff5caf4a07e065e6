import { z } from "@hono/zod-openapi";
import { principalOf } from "../../http/auth";
import { createRouter } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { mintState } from "../../services/wallet/supply";

const MintState = z
  .object({
    totalIssued: z.number().int(),
    inCirculation: z.number().int(),
    spentOnSubscriptions: z.number().int(),
    issuedToday: z.number().int(),
    bySource: z.record(z.string(), z.number().int()),
    balanced: z.boolean(),
    asOf: z.string(),
  })
  .openapi("MintState");

export const coinAdminRoutes = createRouter().openapi(
  protectedRoute("admin", {
    method: "get",
    path: "/api/v1/admin/coins/mint/state",
    tags: ["admin"],
    summary: "Coin supply from the ledger",
    responses: { 200: { description: "Supply figures", content: { "application/json": { schema: MintState } } } },
  }),
  async (c) => c.json(await mintState(c.var.db, principalOf(c), c.var.deps.clock.now()), 200),
);
