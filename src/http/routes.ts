import { createRoute, z, type RouteConfig } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./env";
import { adminOnly, authenticate, authenticateDeletedToo } from "./auth";
import { RATE_LIMIT_EXTENSION } from "./openapi-document";
import { rateLimit } from "./rate-limit";

export const ErrorBody = z
  .object({
    error: z.string().openapi({ example: "invalid_input" }),
    message: z.string(),
    code: z.number().int(),
    requestId: z.string(),
    details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    retry_after: z.number().int().optional(),
  })
  .openapi("Error");

const error = (description: string) => ({ description, content: { "application/json": { schema: ErrorBody } } });

/**
 * A route's own error answers are declared by their meaning alone; each gets the body schema of
 * the route's error shape here, so no error in the document is left without one.
 */
export function withErrorBodies(responses: RouteConfig["responses"], schema: z.ZodType): RouteConfig["responses"] {
  return Object.fromEntries(
    Object.entries(responses).map(([status, response]) =>
      Number(status) >= 400 && !("content" in response) && !("$ref" in response) ? [status, { ...response, content: { "application/json": { schema } } }] : [status, response],
    ),
  );
}

const COMMON_ERRORS = {
  400: error("Invalid input: `details` lists the failing fields"),
  401: error("Missing, invalid or expired credential"),
  403: error("Authenticated, but the account is deleted (`account_deleted`)"),
  429: error("Rate limit exceeded: see `retry_after` and the `X-RateLimit-*` headers"),
  503: error("The identity provider could not hand over its signing keys; retry (`service_unavailable`)"),
} as const;

type Access = "user" | "admin" | "ai" | "aiAdmin";

const MIDDLEWARE = {
  user: [authenticate, rateLimit("general")],
  // The AI check counts the general quota too, in the same script: one store round trip.
  ai: [authenticate, rateLimit("ai")],
  admin: [authenticate, rateLimit("general"), adminOnly],
  // The admin routes under /api/v1/ai-agents count the AI quota like every route there.
  aiAdmin: [authenticate, rateLimit("ai"), adminOnly],
} as const;

/**
 * Declares a protected route: authentication, rate limits and (for admin) the role check come
 * with the declaration, so a route cannot be added without them, and the OpenAPI document shows
 * its security and error responses.
 */
export interface ProtectedRouteOptions {
  /**
   * Runs once the caller is known, before the rate limiter: for reads the route will need, started
   * here so they travel with the limiter's own store call. It must not wait for them.
   */
  beforeLimit?: MiddlewareHandler<AppEnv>[];
  /** The route answers a deleted account too (its restore); every other route refuses one. */
  deletedToo?: boolean;
}

export function protectedRoute<R extends Omit<RouteConfig, "security"> & { path: string }>(access: Access, config: R, options: ProtectedRouteOptions = {}) {
  const own = config.middleware === undefined ? [] : Array.isArray(config.middleware) ? config.middleware : [config.middleware];
  const [standard, ...checks] = MIDDLEWARE[access];
  const authentication = options.deletedToo ? authenticateDeletedToo : standard;
  return createRoute({
    ...config,
    security: [{ bearer: [] }],
    // Tells the document (and its readers) which quota the route counts; see openapi-document.ts.
    [RATE_LIMIT_EXTENSION]: access === "ai" || access === "aiAdmin" ? "ai" : "general",
    // The route's own middleware (e.g. idempotency) runs once the caller is known and counted.
    middleware: [authentication, ...(options.beforeLimit ?? []), ...checks, ...own],
    responses: {
      ...COMMON_ERRORS,
      ...(access === "admin" || access === "aiAdmin" ? { 403: error("Authenticated, but not an admin (`forbidden`), or the account is deleted (`account_deleted`)") } : {}),
      ...(config.request?.body ? { 413: error("Body over 1 MiB (`payload_too_large`)") } : {}),
      ...withErrorBodies(config.responses, ErrorBody),
    },
  });
}
