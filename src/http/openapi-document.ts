import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./env";

/** Which quota a route counts, as protectedRoute marks it in the document (`x-rate-limit`). */
type RateLimitKind = "general" | "ai";
export const RATE_LIMIT_EXTENSION = "x-rate-limit";

type HeaderObject = { description: string; required?: boolean; schema: { type: "string" | "integer" } };

/** The response headers the middleware sets, declared once as components and referenced. */
const HEADERS: Record<string, HeaderObject> = {
  RequestId: {
    description: "This request's id (`req_` and 26 characters): the caller's own `X-Request-Id` when it has this shape (an id an earlier answer gave), else a new one. Quote it to support.",
    required: true,
    schema: { type: "string" },
  },
  RateLimitLimit: { description: "The caller's hourly request quota.", schema: { type: "integer" } },
  RateLimitRemaining: { description: "Requests left in the sliding hour.", schema: { type: "integer" } },
  RateLimitReset: { description: "Unix seconds at which the current hour ends.", schema: { type: "integer" } },
  AiRateLimitLimit: { description: "The caller's hourly AI quota.", schema: { type: "integer" } },
  AiRateLimitRemaining: { description: "AI requests left in the sliding hour.", schema: { type: "integer" } },
  AiRateLimitReset: { description: "Unix seconds at which the current hour ends.", schema: { type: "integer" } },
  RetryAfter: { description: "Seconds to wait before trying again.", required: true, schema: { type: "integer" } },
};

const ref = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });

/**
 * Statuses only ever answered before the rate limiter has counted the request, so never with its
 * headers: a missing or bad credential, a body over the limit (checked first). A 503 may come
 * from the identity provider (before) or from the route itself (after), so it keeps the optional
 * headers. (The limiter also leaves them out when its store is down.)
 */
const BEFORE_THE_LIMITER = new Set(["401", "413"]);

type Operation = { responses?: Record<string, { headers?: Record<string, unknown> }>; [RATE_LIMIT_EXTENSION]?: RateLimitKind };
type Document = { paths?: Record<string, Record<string, Operation>>; components?: Record<string, Record<string, unknown>> };

/** Adds the headers our middleware puts on answers to every operation's responses. */
export function withResponseHeaders<T extends Document>(document: T): T {
  document.components = { ...document.components, headers: { ...document.components?.headers, ...HEADERS } };
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      const limit = operation[RATE_LIMIT_EXTENSION];
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const headers: Record<string, unknown> = { "X-Request-Id": ref("RequestId") };
        if (limit && !BEFORE_THE_LIMITER.has(status)) {
          Object.assign(headers, { "X-RateLimit-Limit": ref("RateLimitLimit"), "X-RateLimit-Remaining": ref("RateLimitRemaining"), "X-RateLimit-Reset": ref("RateLimitReset") });
          if (limit === "ai") {
            Object.assign(headers, { "X-AI-RateLimit-Limit": ref("AiRateLimitLimit"), "X-AI-RateLimit-Remaining": ref("AiRateLimitRemaining"), "X-AI-RateLimit-Reset": ref("AiRateLimitReset") });
          }
        }
        if (status === "429") headers["Retry-After"] = ref("RetryAfter");
        response.headers = { ...headers, ...response.headers };
      }
    }
  }
  return document;
}

/**
 * Serves the OpenAPI 3.1 document at `path`, built once on first request (the routes do not change
 * after the app is built) with the response headers added. A failure to build it is an ordinary
 * error answer, not the generator's error object.
 */
export function serveOpenApiDocument(app: OpenAPIHono<AppEnv>, path: string, info: { title: string; version: string }): void {
  let document: Document | undefined;
  app.get(path, (c) => {
    document ??= withResponseHeaders(app.getOpenAPI31Document({ openapi: "3.1.0", info, security: [{ bearer: [] }] }) as Document);
    return c.json(document);
  });
}
