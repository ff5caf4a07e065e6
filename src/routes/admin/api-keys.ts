import { z } from "@hono/zod-openapi";
import { principalOf } from "../../http/auth";
import { createRouter, jsonBody } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { createApiKey, listApiKeys, revokeApiKey, type KeyServiceDeps } from "../../services/api-keys/keys";
import type { Context } from "hono";
import type { AppEnv } from "../../http/env";

const CreateKeyInput = z
  .object({
    name: z.string().trim().min(1).max(100).optional(),
    expiresAt: z.iso.datetime({ offset: true }).optional().openapi({ description: "ISO 8601; omit for a key without expiry" }),
  })
  .strict()
  .openapi("CreateApiKey");

const CreatedKey = z
  .object({
    keyId: z.string(),
    key: z.string().openapi({ description: "64 hex characters, shown only in this response" }),
    prefix: z.string(),
    name: z.string().nullable(),
    createdAt: z.string(),
    expiresAt: z.string().nullable(),
  })
  .openapi("CreatedApiKey");

const ListedKey = z
  .object({
    keyId: z.string(),
    prefix: z.string(),
    name: z.string().nullable(),
    createdBy: z.string(),
    createdAt: z.string(),
    expiresAt: z.string().nullable(),
    lastUsedAt: z.string().nullable().openapi({ description: "Recorded at most once a minute" }),
    ageDays: z.number().int(),
    rotationAdvised: z.boolean().openapi({ description: "True after 90 days" }),
  })
  .openapi("ApiKey");

const KeyIdParam = z.object({ keyId: z.string().min(1).max(64).regex(/^[A-Za-z0-9_]+$/) });

const deps = (c: Context<AppEnv>): KeyServiceDeps => ({ db: c.var.db, ids: c.var.deps.ids, random: c.var.deps.random, now: c.var.deps.clock.now(), requestId: c.var.requestId });

export const apiKeyRoutes = createRouter()
  .openapi(
    protectedRoute("admin", {
      method: "post",
      path: "/api/v1/admin/api-keys",
      tags: ["admin"],
      summary: "Generate an API key (shown once)",
      request: { body: jsonBody(CreateKeyInput) },
      responses: { 201: { description: "Created", content: { "application/json": { schema: CreatedKey } } } },
    }),
    async (c) => c.json(await createApiKey(deps(c), principalOf(c), c.req.valid("json")), 201),
  )
  .openapi(
    protectedRoute("admin", {
      method: "get",
      path: "/api/v1/admin/api-keys",
      tags: ["admin"],
      summary: "List active API keys without their secrets",
      responses: { 200: { description: "Keys", content: { "application/json": { schema: z.object({ keys: z.array(ListedKey) }) } } } },
    }),
    async (c) => c.json({ keys: await listApiKeys(deps(c), principalOf(c)) }, 200),
  )
  .openapi(
    protectedRoute("admin", {
      method: "delete",
      path: "/api/v1/admin/api-keys/{keyId}",
      tags: ["admin"],
      summary: "Revoke an API key (effective at once)",
      request: { params: KeyIdParam },
      responses: {
        200: { description: "Revoked", content: { "application/json": { schema: z.object({ keyId: z.string(), revoked: z.literal(true) }) } } },
        404: { description: "No such active key" },
      },
    }),
    async (c) => {
      const { keyId } = c.req.valid("param");
      await revokeApiKey(deps(c), principalOf(c), keyId);
      return c.json({ keyId, revoked: true as const }, 200);
    },
  );
