import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { authenticateDeletedToo, principalOf } from "../../http/auth";
import type { AppEnv } from "../../http/env";
import { createRouter, jsonBody } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { deleteAccount, restoreAccount, type AccountContext } from "../../services/account/deletion";

const DeleteInput = z
  .object({ confirm: z.literal("DELETE").openapi({ description: 'Must be exactly "DELETE"' }) })
  .strict()
  .openapi("AccountDeleteInput");
const Deleted = z
  .object({
    status: z.literal("deleted"),
    deletedAt: z.string().openapi({ format: "date-time" }),
    restorableUntil: z.string().openapi({ format: "date-time", description: "Until then POST /api/v1/account/restore undoes the deletion" }),
  })
  .openapi("AccountDeleted");
const Restored = z.object({ status: z.literal("active"), restoredAt: z.string().openapi({ format: "date-time" }) }).openapi("AccountRestored");

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const ctx = (c: Context<AppEnv>): AccountContext => ({ db: c.var.db, kv: c.var.deps.kv, logger: c.var.deps.logger, now: c.var.deps.clock.now(), accounts: c.var.runtime.accounts });

export const accountDeletionRoutes = createRouter()
  .openapi(
    protectedRoute("user", {
      method: "delete",
      path: "/api/v1/account",
      tags: ["account"],
      summary: "Delete the caller's account: gone for everyone at once, restorable for 30 days, then erased",
      request: { body: jsonBody(DeleteInput) },
      responses: {
        200: json(Deleted, "Deleted; every later request with the member's credentials answers 403 account_deleted, except the restore"),
        403: { description: "An API key (`forbidden`): only the signed-in member deletes their account" },
      },
    }),
    async (c) => c.json(await deleteAccount(ctx(c), principalOf(c), c.req.valid("json")), 200),
  )
  .openapi(
    protectedRoute(
      "user",
      {
        method: "post",
        path: "/api/v1/account/restore",
        tags: ["account"],
        summary: "Undo the caller's account deletion within its 30-day grace period",
        responses: {
          200: json(Restored, "Restored as it was"),
          403: { description: "An API key (`forbidden`), or the grace period is over (`account_deleted`)" },
          409: { description: "The account is not deleted" },
          503: { description: "The restore cannot be recorded everywhere right now; nothing changed, retry" },
        },
      },
      { deletedToo: true },
    ),
    async (c) => c.json(await restoreAccount(ctx(c), principalOf(c)), 200),
  );
