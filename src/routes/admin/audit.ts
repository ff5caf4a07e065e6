import { z } from "@hono/zod-openapi";
import { principalOf } from "../../http/auth";
import { createRouter } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { listAudit } from "../../services/audit/log";

const Id = z.string().min(1).max(64).regex(/^[A-Za-z0-9_.-]+$/);

const AuditQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().regex(/^aud_[0-9a-z]{26}$/, "a nextCursor value").optional(),
  action: z.string().regex(/^[a-z_]+\.[a-z_]+$/, "an action such as kb.replace").optional(),
  actorUserId: Id.optional(),
  targetType: z.string().regex(/^[a-z_]{1,40}$/).optional(),
  targetId: Id.optional(),
});

const AuditEntry = z
  .object({
    auditId: z.string(),
    actorUserId: z.string(),
    credential: z.enum(["token", "api_key"]).openapi({ description: "How the admin signed the request" }),
    apiKeyId: z.string().nullable(),
    action: z.string().openapi({ example: "kb.replace" }),
    targetType: z.string(),
    targetId: z.string(),
    requestId: z.string().openapi({ description: "The X-Request-Id of the write" }),
    details: z.record(z.string(), z.unknown()),
    createdAt: z.string(),
  })
  .openapi("AuditEntry");

export const auditRoutes = createRouter().openapi(
  protectedRoute("admin", {
    method: "get",
    path: "/api/v1/admin/audit",
    tags: ["admin"],
    summary: "The admin audit log, newest first",
    request: { query: AuditQuery },
    responses: {
      200: {
        description: "A page of entries; pass `nextCursor` as `cursor` for the next",
        content: { "application/json": { schema: z.object({ entries: z.array(AuditEntry), nextCursor: z.string().nullable() }) } },
      },
    },
  }),
  async (c) => c.json(await listAudit(c.var.db, principalOf(c), c.req.valid("query")), 200),
);
