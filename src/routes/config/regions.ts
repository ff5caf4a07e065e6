import { z } from "@hono/zod-openapi";
import { principalOf } from "../../http/auth";
import { noneMatchHits } from "../../http/conditional";
import { createRouter, jsonBody } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { enabledRegions, regionsConfig, regionsEtag, replaceRegions } from "../../services/config/regions";

const Region = z.object({ code: z.string().openapi({ example: "DE" }), name: z.string().openapi({ example: "Germany" }) }).openapi("Region");

const RegionsConfig = z
  .object({
    enabled: z.array(z.string()).openapi({ description: "Enabled ISO 3166-1 alpha-2 codes, sorted" }),
    version: z.number().int().openapi({ description: "0 before the first write; the ETag is `\"maps-regions-<version>\"`" }),
    updatedAt: z.string().nullable(),
    updatedBy: z.string().nullable(),
    catalog: z.array(Region.extend({ enabled: z.boolean() })).openapi({ description: "Every ISO 3166-1 country, by code" }),
  })
  .openapi("MapsRegionsConfig");

const RegionsWritten = RegionsConfig.omit({ catalog: true }).openapi("MapsRegionsWritten");

const RegionsInput = z
  .object({ enabled: z.array(z.string().min(1).max(16)).max(300).openapi({ description: "The whole enabled set (replaces the previous one); duplicates count once" }) })
  .strict()
  .openapi("MapsRegionsInput");

const IfMatch = z.object({
  "if-match": z.string().max(512).optional().openapi({ description: "The ETag of the document read (`\"maps-regions-<version>\"`), or `*`; required" }),
});

const PATH = "/api/v1/admin/config/maps/regions";

export const regionRoutes = createRouter()
  .openapi(
    protectedRoute("admin", {
      method: "get",
      path: PATH,
      tags: ["admin"],
      summary: "The ISO 3166-1 catalog and the regions enabled on maps",
      responses: {
        200: { description: "The document; its ETag header is the version to send in If-Match", content: { "application/json": { schema: RegionsConfig } } },
        304: { description: "Unchanged since the ETag sent in If-None-Match" },
      },
    }),
    async (c) => {
      const doc = await regionsConfig(c.var.db, principalOf(c));
      const etag = regionsEtag(doc.version);
      c.header("ETag", etag);
      c.header("Cache-Control", "private, no-cache");
      if (noneMatchHits(c.req.header("if-none-match"), etag)) return c.body(null, 304);
      return c.json(doc, 200);
    },
  )
  .openapi(
    protectedRoute("admin", {
      method: "put",
      path: PATH,
      tags: ["admin"],
      summary: "Replace the enabled regions (If-Match required)",
      request: { headers: IfMatch, body: jsonBody(RegionsInput) },
      responses: {
        200: { description: "Written; the ETag header is the new version", content: { "application/json": { schema: RegionsWritten } } },
        412: { description: "The document changed since the version in If-Match (`precondition_failed`); the ETag header is the current version" },
        428: { description: "No If-Match header (`precondition_required`)" },
      },
    }),
    async (c) => {
      const { enabled } = c.req.valid("json");
      const d = c.var.deps;
      const doc = await replaceRegions({ db: c.var.db, ids: d.ids, now: d.clock.now(), requestId: c.var.requestId }, principalOf(c), { enabled, ifMatch: c.req.header("if-match") });
      c.header("ETag", regionsEtag(doc.version));
      return c.json(doc, 200);
    },
  )
  .openapi(
    protectedRoute("user", {
      method: "get",
      path: "/api/v1/config/maps/regions",
      tags: ["config"],
      summary: "The regions enabled on maps",
      responses: {
        200: { description: "Enabled regions with English names", content: { "application/json": { schema: z.object({ regions: z.array(Region), version: z.number().int() }) } } },
        304: { description: "Unchanged since the ETag sent in If-None-Match" },
      },
    }),
    async (c) => {
      const doc = await enabledRegions(c.var.db);
      const etag = regionsEtag(doc.version);
      c.header("ETag", etag);
      c.header("Cache-Control", "private, no-cache");
      if (noneMatchHits(c.req.header("if-none-match"), etag)) return c.body(null, 304);
      return c.json(doc, 200);
    },
  );
