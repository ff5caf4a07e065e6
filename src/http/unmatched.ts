import type { MiddlewareHandler } from "hono";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppDeps } from "../deps";
import type { AppEnv } from "./env";
import { errorResponse, unmatchedError } from "./error-handler";
import { logAccess, requestIdFor } from "./middleware";

/** The access log's route for a request no route took, as Hono reports it. */
export const UNMATCHED_ROUTE = "/*";

/**
 * Answers a method and path that no route takes before Hono dispatches it, synchronously: the
 * same 404 (shape 1, or shape 2 under the AI prefix), request id and access line the app would
 * give, without the request context, database session and body checks only a route needs.
 * Unknown paths are what scanners send by the thousand, and a synchronous answer lets the Node
 * adapter skip its promise path, which costs more than the rest of the answer. `context` is the
 * app-wide middleware: a match made only of it is no route. HEAD goes the usual way (Hono
 * answers it from GET without a body). A request that has a route is matched twice (here and in
 * Hono's dispatch); the router answers in well under a microsecond, measured on this app's routes.
 */
export function answerUnmatchedFirst(app: OpenAPIHono<AppEnv>, deps: AppDeps, context: MiddlewareHandler<AppEnv>): void {
  const dispatch = app.fetch;
  app.fetch = (request, env, executionCtx) => {
    if (request.method !== "HEAD") {
      const path = app.getPath(request, { env });
      const [handlers] = app.router.match(request.method, path);
      if (handlers.every((h) => h[0][0] === context)) return unmatched(deps, request, path);
    }
    return dispatch(request, env, executionCtx);
  };
}

function unmatched(deps: AppDeps, request: Request, path: string): Response {
  const started = deps.clock.now();
  const requestId = requestIdFor(deps, request.headers.get("x-request-id"));
  const res = errorResponse({ requestId, path, nowMs: started }, unmatchedError(request.method, path));
  logAccess(deps, { requestId, method: request.method, route: UNMATCHED_ROUTE, path, status: 404, started });
  return res;
}
