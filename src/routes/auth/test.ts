import { z } from "@hono/zod-openapi";
import { permissionsOf } from "../../auth/principal";
import { principalOf } from "../../http/auth";
import { createRouter } from "../../http/router";
import { protectedRoute } from "../../http/routes";

const AuthTestBody = z
  .object({
    success: z.boolean(),
    message: z.string(),
    user: z.object({ id: z.string(), email: z.string(), role: z.string(), permissions: z.array(z.string()) }),
  })
  .openapi("AuthTest");

const route = protectedRoute("user", {
  method: "get",
  path: "/v1/auth/test",
  tags: ["auth"],
  summary: "Check a credential (API key or access token) and see who it acts as",
  responses: { 200: { description: "The credential is valid", content: { "application/json": { schema: AuthTestBody } } } },
});

export const authTestRoutes = createRouter().openapi(route, (c) => {
  const p = principalOf(c);
  return c.json(
    {
      success: true,
      message: p.credential === "api_key" ? "API key is valid" : "access token is valid",
      user: { id: p.userId, email: p.email ?? "", role: p.role, permissions: permissionsOf(p.role) },
    },
    200,
  );
});
