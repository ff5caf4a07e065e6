import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { principalOf } from "../../http/auth";
import type { AppEnv } from "../../http/env";
import { createRouter, jsonBody } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { idPattern } from "../../platform/ids";
import { REPORT_REASONS, blockUser, listBlocks, reportUser, unblockUser, type ModerationContext } from "../../services/safety/moderation";

const UserId = z.string().max(64).regex(idPattern("usr"), "a user id (usr_…)").openapi({ example: "usr_01j9zq3v5k8m2n4p6r8t0w2y4a" });

const BlockInput = z.object({ userId: UserId }).strict().openapi("BlockInput");
const BlockResult = z.object({ userId: z.string(), blocked: z.literal(true), createdAt: z.string() }).openapi("Block");
const BlockList = z
  .object({ blocks: z.array(z.object({ userId: z.string(), displayName: z.string().nullable(), createdAt: z.string() })) })
  .openapi("BlockList");
const ReportInput = z
  .object({ userId: UserId, reason: z.enum(REPORT_REASONS), details: z.string().trim().max(2000).optional() })
  .strict()
  .openapi("ReportInput");
const ReportResult = z.object({ reportId: z.string(), reason: z.enum(REPORT_REASONS), blocked: z.literal(true) }).openapi("ReportResult");

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const ctx = (c: Context<AppEnv>): ModerationContext => ({ db: c.var.db, ids: c.var.deps.ids, now: c.var.deps.clock.now() });

export const safetyRoutes = createRouter()
  .openapi(
    protectedRoute("user", {
      method: "post",
      path: "/api/v1/blocks",
      tags: ["safety"],
      summary: "Block a person (both are hidden from each other everywhere); repeating it is harmless",
      request: { body: jsonBody(BlockInput) },
      responses: { 201: json(BlockResult, "Blocked"), 200: json(BlockResult, "Already blocked"), 404: { description: "No such user" } },
    }),
    async (c) => {
      const { created, block } = await blockUser(ctx(c), principalOf(c), c.req.valid("json").userId);
      return created ? c.json(block, 201) : c.json(block, 200);
    },
  )
  .openapi(
    protectedRoute("user", {
      method: "delete",
      path: "/api/v1/blocks/{userId}",
      tags: ["safety"],
      summary: "Lift the caller's block of a person",
      request: { params: z.object({ userId: UserId }) },
      responses: { 204: { description: "Unblocked" }, 404: { description: "The caller has not blocked this person" } },
    }),
    async (c) => {
      await unblockUser(ctx(c), principalOf(c), c.req.valid("param").userId);
      return c.body(null, 204);
    },
  )
  .openapi(
    protectedRoute("user", {
      method: "get",
      path: "/api/v1/blocks",
      tags: ["safety"],
      summary: "The people the caller blocked, newest first",
      responses: { 200: json(BlockList, "Blocks") },
    }),
    async (c) => c.json({ blocks: await listBlocks(ctx(c), principalOf(c)) }, 200),
  )
  .openapi(
    protectedRoute("user", {
      method: "post",
      path: "/api/v1/reports",
      tags: ["safety"],
      summary: "Report a person to moderators; this also blocks them",
      request: { body: jsonBody(ReportInput) },
      responses: { 201: json(ReportResult, "Reported and blocked"), 404: { description: "No such user" } },
    }),
    async (c) => c.json(await reportUser(ctx(c), principalOf(c), c.req.valid("json")), 201),
  );
