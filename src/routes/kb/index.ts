import { noneMatchHits, prefers } from "../../http/conditional";
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { principalOf } from "../../http/auth";
import type { AppEnv } from "../../http/env";
import { createRouter, jsonBody } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { ApiError } from "../../errors";
import { createAsset, deleteAsset, listAssets, type AssetInput } from "../../services/kb/assets";
import { listKbVersions, readKb, replaceKb } from "../../services/kb/document";
import { assetContext, kbContext } from "./context";

const KbDocument = z
  .object({
    content: z.string().openapi({ description: "Markdown" }),
    version: z.number().int(),
    updatedAt: z.string(),
  })
  .openapi("KbDocument");

const KbInput = z.object({ content: z.string().max(1_000_000) }).strict().openapi("KbInput");

const KbVersions = z
  .object({
    versions: z.array(z.object({ version: z.number().int(), createdAt: z.string(), createdBy: z.string().nullable(), bytes: z.number().int(), current: z.boolean() })),
    nextCursor: z.string().nullable(),
  })
  .openapi("KbVersions");

const Asset = z
  .object({
    assetId: z.string(),
    title: z.string(),
    source: z.string().openapi({ description: "`upload:<file name>` or the fetched URL (after redirects)" }),
    contentType: z.string(),
    bytes: z.number().int(),
    contentHash: z.string().openapi({ description: "SHA-256 of the stored bytes, hex" }),
    sections: z.array(z.object({ sectionId: z.string(), title: z.string(), chars: z.number().int() })).openapi({ description: "The grounding manifest" }),
    createdAt: z.string(),
    createdBy: z.string(),
  })
  .openapi("KbAsset");

const optionalText = (max: number) => z.string().max(max).optional();
const AssetJsonInput = z
  .object({ url: z.string().max(2048), title: optionalText(200), groundingText: optionalText(10 * 1024 * 1024) })
  .strict()
  .openapi("KbAssetFromUrl");
const AssetFormInput = z
  .object({
    file: z.any().optional().openapi({ type: "string", format: "binary", description: "Markdown, plain text or HTML, up to 10 MiB" }),
    url: optionalText(2048),
    title: optionalText(200),
    groundingText: optionalText(10 * 1024 * 1024),
  })
  .openapi("KbAssetUpload");

const AssetId = z.object({ assetId: z.string().max(64).regex(/^[A-Za-z0-9_]+$/, "an asset id (kba_…)") });
const VersionsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().regex(/^\d{1,15}$/, "a nextCursor value").optional(),
});

const AssetsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().regex(/^kba_[0-9a-z]{1,60}$/, "a nextCursor value").optional(),
});

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

const MAX_FILE_NAME = 255;

/** The form or JSON body of an asset upload, whichever the client sent. */
function assetInput(c: Context<AppEnv>, form: z.infer<typeof AssetFormInput> | undefined, body: z.infer<typeof AssetJsonInput> | undefined): Promise<AssetInput> | AssetInput {
  const fields = form ?? body;
  if (!fields) throw new ApiError("invalid_input", "send a multipart form with `file` or `url`, or JSON with `url`", { details: [{ path: "(body)", message: "required" }] });
  const extra = { title: fields.title, groundingText: fields.groundingText };
  const file = form?.file as unknown;
  if (file instanceof File) {
    if (form?.url !== undefined) throw new ApiError("invalid_input", "send either a file or a url, not both", { details: [{ path: "url", message: "not allowed with file" }] });
    // The part's file name is kept as the asset's source (its text is checked with the form's).
    if (file.name.length > MAX_FILE_NAME) throw new ApiError("invalid_input", `the file name is longer than ${MAX_FILE_NAME} characters`, { details: [{ path: "file", message: `file name of at most ${MAX_FILE_NAME} characters` }] });
    return file.arrayBuffer().then((buf) => ({ kind: "file" as const, bytes: new Uint8Array(buf), fileName: file.name, declaredType: file.type, ...extra }));
  }
  if (file !== undefined) throw new ApiError("invalid_input", "`file` must be a file part", { details: [{ path: "file", message: "expected a file" }] });
  if (!fields.url) throw new ApiError("invalid_input", "send a file or a url", { details: [{ path: "url", message: "required without file" }] });
  return { kind: "url", url: fields.url, ...extra };
}

export const kbRoutes = createRouter()
  .openapi(
    protectedRoute("user", {
      method: "get",
      path: "/api/v1/kb",
      tags: ["kb"],
      summary: "The support knowledge base (JSON, or the raw Markdown with `Accept: text/markdown`); up to 10 minutes old",
      responses: {
        200: { description: "The current document", content: { "application/json": { schema: KbDocument }, "text/markdown": { schema: z.string() } } },
        304: { description: "Unchanged since the ETag sent in If-None-Match" },
      },
    }),
    async (c) => {
      const doc = await readKb(kbContext(c));
      const markdown = prefers(c.req.header("accept"), "text/markdown", "application/json");
      // Each representation has its own tag: a 304 must not confirm a copy in the other form.
      const etag = markdown ? `"kb-${doc.version}.md"` : `"kb-${doc.version}"`;
      c.header("ETag", etag);
      c.header("Cache-Control", "private, no-cache");
      c.header("Vary", "Accept");
      if (noneMatchHits(c.req.header("if-none-match"), etag)) return c.body(null, 304);
      if (markdown) return c.body(doc.content, 200, { "Content-Type": "text/markdown; charset=utf-8" });
      return c.json(doc, 200);
    },
  )
  .openapi(
    protectedRoute("admin", {
      method: "put",
      path: "/api/v1/kb",
      tags: ["kb"],
      summary: "Replace the whole knowledge base (a new version; earlier ones are kept)",
      request: { body: jsonBody(KbInput) },
      responses: { 200: json(KbDocument, "The new current version") },
    }),
    async (c) => c.json(await replaceKb(kbContext(c), principalOf(c), c.req.valid("json").content), 200),
  )
  .openapi(
    protectedRoute("admin", {
      method: "get",
      path: "/api/v1/kb/versions",
      tags: ["kb"],
      summary: "Earlier and current versions of the knowledge base, newest first",
      request: { query: VersionsQuery },
      responses: { 200: json(KbVersions, "Versions") },
    }),
    async (c) => {
      const q = c.req.valid("query");
      return c.json(await listKbVersions(kbContext(c), principalOf(c), { limit: q.limit, before: q.cursor === undefined ? undefined : Number(q.cursor) }), 200);
    },
  )
  .openapi(
    protectedRoute("user", {
      method: "get",
      path: "/api/v1/kb/assets",
      tags: ["kb"],
      summary: "Uploaded assets with their grounding manifests, newest first, a page at a time",
      request: { query: AssetsQuery },
      responses: {
        200: json(
          z.object({ assets: z.array(Asset), nextCursor: z.string().nullable().openapi({ description: "Pass as `cursor` for the next page; null on the last" }) }).openapi("KbAssetList"),
          "Assets",
        ),
      },
    }),
    async (c) => {
      const q = c.req.valid("query");
      return c.json(await listAssets({ db: c.var.db }, { limit: q.limit, after: q.cursor }), 200);
    },
  )
  .openapi(
    protectedRoute("admin", {
      method: "post",
      path: "/api/v1/kb/assets",
      tags: ["kb"],
      summary: "Add an asset: a file upload (multipart `file`) or a URL the server fetches, with optional `title` and `groundingText`",
      request: {
        body: {
          description: "multipart/form-data with `file` (or `url`), or JSON with `url`",
          content: { "multipart/form-data": { schema: AssetFormInput }, "application/json": { schema: AssetJsonInput } },
        },
      },
      responses: { 201: json(Asset, "Created"), 413: { description: "Larger than 10 MiB" } },
    }),
    async (c) => {
      const type = c.req.header("content-type") ?? "";
      const isJson = /^application\/([a-z0-9.+-]+\+)?json/i.test(type);
      const form = isJson ? undefined : (c.req.valid("form") as z.infer<typeof AssetFormInput> | undefined);
      const body = isJson ? (c.req.valid("json") as z.infer<typeof AssetJsonInput> | undefined) : undefined;
      const input = await assetInput(c, form, body);
      return c.json(await createAsset(assetContext(c), principalOf(c), input), 201);
    },
  )
  .openapi(
    protectedRoute("admin", {
      method: "delete",
      path: "/api/v1/kb/assets/{assetId}",
      tags: ["kb"],
      summary: "Remove an asset, its manifest and its index entries",
      request: { params: AssetId },
      responses: { 204: { description: "Removed" }, 404: { description: "No such asset" } },
    }),
    async (c) => {
      await deleteAsset(assetContext(c), principalOf(c), c.req.valid("param").assetId);
      return c.body(null, 204);
    },
  );
