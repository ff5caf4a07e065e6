import { createRoute, z } from "@hono/zod-openapi";
import { noneMatchHits } from "../../http/conditional";
import { principalOf } from "../../http/auth";
import { createRouter, jsonBody } from "../../http/router";
import { ErrorBody, protectedRoute } from "../../http/routes";
import { ApiError } from "../../errors";
import { readBundle, replaceBundle } from "../../services/translations/bundles";
import { bundleLanguage, negotiate } from "../../services/translations/languages";

/** One hour at the CDN and in browsers (api-spec "Limits"). */
export const BUNDLE_MAX_AGE_SECONDS = 3600;

const Namespace = z.string().min(1).max(64).openapi({ param: { name: "namespace", in: "path" }, example: "common" });
const Lang = z.string().min(1).max(35);

const Bundle = z
  .record(z.string(), z.any())
  .openapi("TranslationBundle", { description: "i18next JSON v4: nested keys, `{{var}}`, `$t(key)`, plural forms `_zero`…`_other`" });

const ReplacedBundle = z
  .object({ namespace: z.string(), language: z.string(), keys: z.number().int(), updatedAt: z.string() })
  .openapi("ReplacedTranslationBundle");

const err = (description: string) => ({ description, content: { "application/json": { schema: ErrorBody } } });

function supported(lang: string): string {
  const tag = bundleLanguage(lang);
  if (!tag) throw new ApiError("invalid_language", `'${lang}' is not a supported language`, { details: [{ path: "lang", message: "one of the 40 supported languages, optionally with a region (pt-BR)" }] });
  return tag;
}

const getBundle = createRoute({
  method: "get",
  path: "/api/v1/translations/{namespace}",
  tags: ["translations"],
  summary: "An app translation bundle (public and cacheable; a bearer token is accepted and ignored)",
  description:
    "The language is `lang`, else the best supported one in `Accept-Language`, else English. Keys the language lacks come from its fallback chain " +
    "(`pt-BR` → `pt` → `en`); `Content-Language` lists the languages the answer holds, the asked-for one first.",
  security: [],
  request: { params: z.object({ namespace: Namespace }), query: z.object({ lang: Lang.optional().openapi({ example: "pt-BR" }) }) },
  responses: {
    200: {
      description: "The bundle, with `ETag`, `Content-Language` and `Cache-Control: public, max-age=3600`",
      headers: z.object({
        ETag: z.string().openapi({ description: "Strong; changes with the content" }),
        "Content-Language": z.string().openapi({ description: "e.g. `pt-BR, pt, en`" }),
        "Cache-Control": z.string(),
      }),
      content: { "application/json": { schema: Bundle } },
    },
    304: { description: "Unchanged since the ETag sent in If-None-Match" },
    400: err("`lang` is not a supported language (`invalid_language`)"),
    404: err("No such namespace"),
  },
});

const putBundle = protectedRoute("admin", {
  method: "put",
  path: "/api/v1/admin/translations/{namespace}/{lang}",
  tags: ["translations"],
  summary: "Replace a language's bundle; it must have the English bundle's keys (with the language's plural forms) and placeholders",
  request: {
    params: z.object({ namespace: Namespace, lang: Lang.openapi({ param: { name: "lang", in: "path" }, example: "fr" }) }),
    body: jsonBody(Bundle),
  },
  responses: {
    200: { description: "Stored", content: { "application/json": { schema: ReplacedBundle } } },
    400: { description: "Keys or placeholders differ from English (`details` lists each), English itself, or an unsupported language" },
    404: { description: "No such namespace" },
  },
});

export const bundleRoutes = createRouter()
  .openapi(getBundle, async (c) => {
    const { namespace } = c.req.valid("param");
    const { lang } = c.req.valid("query");
    const language = lang === undefined ? negotiate(c.req.header("accept-language")) : supported(lang);
    const served = await readBundle(c.var.db, namespace, language);
    c.header("Cache-Control", `public, max-age=${BUNDLE_MAX_AGE_SECONDS}`);
    c.header("ETag", served.etag);
    c.header("Content-Language", served.languages.join(", "));
    // Negotiated from the header, the answer differs by it; chosen by `lang`, the URL says it all.
    if (lang === undefined) c.header("Vary", "Accept-Language");
    if (noneMatchHits(c.req.header("if-none-match"), served.etag)) return c.body(null, 304);
    return c.json(served.bundle, 200);
  })
  .openapi(putBundle, async (c) => {
    const { namespace, lang } = c.req.valid("param");
    const result = await replaceBundle({ db: c.var.db, ids: c.var.deps.ids, now: c.var.deps.clock.now(), requestId: c.var.requestId }, principalOf(c), namespace, lang, c.req.valid("json"));
    return c.json(result, 200);
  });
