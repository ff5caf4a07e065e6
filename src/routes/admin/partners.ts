import { z } from "@hono/zod-openapi";
import { principalOf } from "../../http/auth";
import { createRouter, jsonBody } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { listPartners, reviewPartner } from "../../services/partners/review";
import { partnerContext } from "../partners/context";
import { AdminPartner, PartnerIdParam, PartnerProfile } from "../partners/schemas";

const ok = (description: string, schema: z.ZodType) => ({ description, content: { "application/json": { schema } } });
const DECIDED = { 404: { description: "No such partner" }, 409: { description: "The application was already decided" } };

export const partnerAdminRoutes = createRouter()
  .openapi(
    protectedRoute("admin", {
      method: "get",
      path: "/api/v1/admin/partners",
      tags: ["admin", "partners"],
      summary: "Partner applications, newest first, optionally of one status",
      request: {
        query: z.object({
          status: z.enum(["pending_review", "approved", "rejected"]).optional(),
          limit: z.coerce.number().int().min(1).max(100).default(20),
          cursor: z.string().max(128).optional(),
        }),
      },
      responses: { 200: ok("A page of applications", z.object({ partners: z.array(AdminPartner), nextCursor: z.string().nullable() })) },
    }),
    async (c) => c.json(await listPartners(partnerContext(c), principalOf(c), c.req.valid("query")), 200),
  )
  .openapi(
    protectedRoute("admin", {
      method: "post",
      path: "/api/v1/admin/partners/{partnerId}/approve",
      tags: ["admin", "partners"],
      summary: "Approve an application in review; the partner is sent partner.application.approved",
      request: { params: PartnerIdParam },
      responses: { 200: ok("The approved profile", PartnerProfile), ...DECIDED },
    }),
    async (c) => c.json(await reviewPartner(partnerContext(c), principalOf(c), c.req.valid("param").partnerId, { approve: true }), 200),
  )
  .openapi(
    protectedRoute("admin", {
      method: "post",
      path: "/api/v1/admin/partners/{partnerId}/reject",
      tags: ["admin", "partners"],
      summary: "Reject an application in review; the partner is sent partner.application.rejected with the reason",
      request: { params: PartnerIdParam, body: jsonBody(z.object({ reason: z.string().trim().min(1).max(1000) }).strict().openapi("PartnerRejection")) },
      responses: { 200: ok("The rejected profile", PartnerProfile), ...DECIDED },
    }),
    async (c) => c.json(await reviewPartner(partnerContext(c), principalOf(c), c.req.valid("param").partnerId, { approve: false, reason: c.req.valid("json").reason }), 200),
  );
