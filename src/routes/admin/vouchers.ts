import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { principalOf } from "../../http/auth";
import type { AppEnv } from "../../http/env";
import { createRouter, jsonBody } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { createBatch, listBatches, revokeBatch, revokeVoucher, type VoucherAdminContext } from "../../services/vouchers/batches";
import { redeemVoucher } from "../../services/vouchers/redeem";

const MAX_COINS = 1_000_000;
const MAX_COUNT = 1_000;

const CreateBatchInput = z
  .object({
    coins: z.number().int().min(1).max(MAX_COINS).openapi({ description: "Coins each code credits" }),
    count: z.number().int().min(1).max(MAX_COUNT).openapi({ description: "How many codes" }),
    expiresAt: z.iso.datetime({ offset: true }).optional().openapi({ description: "ISO 8601; omit for codes without expiry" }),
    note: z.string().trim().min(1).max(280).optional(),
  })
  .strict()
  .openapi("CreateVoucherBatch");

/** What a batch says of itself, in the creation answer and in the inventory. */
const BatchFields = z.object({
  batchId: z.string(),
  coins: z.number().int(),
  count: z.number().int(),
  note: z.string().nullable(),
  expiresAt: z.string().nullable(),
  createdAt: z.string(),
});

const CreatedBatch = BatchFields.extend({
  codes: z.array(z.object({ voucherId: z.string(), code: z.string().openapi({ example: "7KQ2-M9XD-3HRT-P0WE" }) })).openapi({ description: "Shown only in this answer" }),
}).openapi("CreatedVoucherBatch");

const Counts = z.object({ active: z.number().int(), redeemed: z.number().int(), expired: z.number().int(), revoked: z.number().int() });
const Batch = BatchFields.extend({
  createdBy: z.string(),
  revokedAt: z.string().nullable(),
  byStatus: Counts,
  coinsOutstanding: z.number().int().openapi({ description: "Coins still claimable (active, unexpired codes)" }),
  coinsRedeemed: z.number().int(),
}).openapi("VoucherBatch");

const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().regex(/^vbt_[0-9a-z]{26}$/, "a nextCursor value").optional(),
});

const BatchParam = z.object({ batchId: z.string().regex(/^vbt_[0-9a-z]{26}$/, "a batch id") });
const VoucherParam = z.object({ voucherId: z.string().regex(/^vch_[0-9a-z]{26}$/, "a voucher id") });

const RedeemInput = z
  .object({ code: z.string().trim().min(1).max(64).openapi({ description: "As printed; case, spaces and dashes do not matter" }) })
  .strict()
  .openapi("RedeemVoucher");
const Redemption = z
  .object({ voucherId: z.string(), coins: z.number().int(), balance: z.number().int(), transactionId: z.string(), redeemedAt: z.string() })
  .openapi("VoucherRedemption");

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

const adminContext = (c: Context<AppEnv>): VoucherAdminContext => {
  const d = c.var.deps;
  return { db: c.var.db, ids: d.ids, random: d.random, now: d.clock.now(), requestId: c.var.requestId };
};

export const voucherRoutes = createRouter()
  .openapi(
    protectedRoute("admin", {
      method: "post",
      path: "/api/v1/admin/vouchers",
      tags: ["admin"],
      summary: "Create a batch of voucher codes (shown once)",
      request: { body: jsonBody(CreateBatchInput) },
      responses: { 201: json(CreatedBatch, "Created; the codes are not retrievable later") },
    }),
    async (c) => {
      const batch = await createBatch(adminContext(c), principalOf(c), c.req.valid("json"));
      c.header("Cache-Control", "no-store");
      return c.json(batch, 201);
    },
  )
  .openapi(
    protectedRoute("admin", {
      method: "get",
      path: "/api/v1/admin/vouchers",
      tags: ["admin"],
      summary: "Voucher inventory per batch, newest first",
      request: { query: ListQuery },
      responses: { 200: json(z.object({ batches: z.array(Batch), nextCursor: z.string().nullable() }), "A page of batches") },
    }),
    async (c) => c.json(await listBatches(adminContext(c), principalOf(c), c.req.valid("query")), 200),
  )
  .openapi(
    protectedRoute("admin", {
      method: "post",
      path: "/api/v1/admin/vouchers/batches/{batchId}/revoke",
      tags: ["admin"],
      summary: "Revoke every unredeemed code of a batch",
      request: { params: BatchParam },
      responses: { 200: json(z.object({ batchId: z.string(), revokedCodes: z.number().int() }), "Revoked"), 404: { description: "No such batch" } },
    }),
    async (c) => c.json(await revokeBatch(adminContext(c), principalOf(c), c.req.valid("param").batchId), 200),
  )
  .openapi(
    protectedRoute("admin", {
      method: "post",
      path: "/api/v1/admin/vouchers/{voucherId}/revoke",
      tags: ["admin"],
      summary: "Revoke one code",
      request: { params: VoucherParam },
      responses: {
        200: json(z.object({ voucherId: z.string(), status: z.literal("revoked") }), "Revoked (also when it already was)"),
        404: { description: "No such voucher" },
        409: { description: "Already redeemed" },
      },
    }),
    async (c) => c.json(await revokeVoucher(adminContext(c), principalOf(c), c.req.valid("param").voucherId), 200),
  )
  .openapi(
    protectedRoute("user", {
      method: "post",
      path: "/api/v1/vouchers/redeem",
      tags: ["wallet"],
      summary: "Redeem a voucher code into the wallet",
      request: { body: jsonBody(RedeemInput) },
      responses: {
        200: json(Redemption, "Credited"),
        404: { description: "No such code (counts as a failed attempt)" },
        409: { description: "Already redeemed, revoked or expired (counts as a failed attempt)" },
      },
    }),
    async (c) => {
      const d = c.var.deps;
      const result = await redeemVoucher(
        { db: c.var.db, kv: d.kv, ids: d.ids, logger: d.logger, now: d.clock.now(), clientAddress: d.clientAddress?.(c.req.raw, c.env) ?? null },
        principalOf(c),
        c.req.valid("json"),
      );
      return c.json(result, 200);
    },
  );
