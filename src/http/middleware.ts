import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { matchedRoutes, routePath } from "hono/route";
import { METHOD_NAME_ALL } from "hono/router";
import { ApiError } from "../errors";
import type { AppDeps } from "../deps";
import type { AppEnv, Runtime } from "./env";
import { idPattern } from "../platform/ids";
import { defer } from "./defer";
import { onError } from "./error-handler";

export const MAX_BODY_BYTES = 1024 * 1024;

/** The methods whose bodies the app reads. */
export const BODY_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"]);
/** An incoming X-Request-Id is kept only in our own shape; anything else could carry whatever a client wants logged. */
const REQUEST_ID = idPattern("req");

/**
 * Puts deps, a request id and a database session on the context, releases the session when the
 * request ends, and writes the one access-log line. Kept as one middleware, with the checks every
 * request passes (`guard`, run inside it): each extra layer on every request's path costs
 * throughput.
 */
export function requestContext(deps: AppDeps, runtime: Runtime, guard?: MiddlewareHandler<AppEnv>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = deps.clock.now();
    const requestId = requestIdFor(deps, c.req.header("x-request-id"));
    c.set("deps", deps);
    c.set("runtime", runtime);
    c.set("requestId", requestId);
    const session = deps.database.session();
    const sessionWork: Promise<unknown>[] = [];
    c.set("db", session.db);
    c.set("sessionWork", sessionWork);
    try {
      if (!guard) await next();
      else {
        try {
          await guard(c, next);
        } catch (err) {
          // What Hono does for a failing middleware one layer out, done here so that the access
          // line below sees the error answer. The handler's own errors never reach this: Hono
          // has turned them into the answer inside next().
          if (!(err instanceof Error)) throw err;
          c.error = err;
          c.res = await onError(err, c);
        }
      }
    } finally {
      // Error answers carry it already. Otherwise it is set on the finished response: c.header()
      // here would make Hono rebuild it, and a header prepared before the handler pushes the
      // Node adapter off its fast path.
      if (!c.get("requestIdOnResponse")) c.res.headers.set("X-Request-Id", requestId);
      if (session.release) defer(c, Promise.allSettled(sessionWork).then(() => session.release?.()), "db session release");
      logAccess(deps, { requestId, method: c.req.method, route: routePath(c), path: c.req.path, status: c.res.status, started, userId: c.get("userId") });
    }
  };
}

/** The caller's own X-Request-Id when it is one of ours (`req_` and 26 characters), else a new one. */
export function requestIdFor(deps: Pick<AppDeps, "ids">, incoming: string | null | undefined): string {
  return incoming && REQUEST_ID.test(incoming) ? incoming : deps.ids.next("req");
}

/** The one access-log line of a request. */
export function logAccess(
  deps: AppDeps,
  line: { requestId: string; method: string; route: string; path: string; status: number; started: number; userId?: string },
): void {
  deps.logger.request({
    requestId: line.requestId,
    method: line.method,
    route: line.route,
    path: line.path,
    status: line.status,
    durationMs: deps.clock.now() - line.started,
    userId: line.userId,
  });
}

/**
 * Size limits and the JSON-only rule as one layer: most requests carry no body, and each layer
 * on every request's path costs throughput.
 */
export function checkBodies(options: { limits?: BodyLimitOverride[]; formPaths?: string[]; anyTypePaths?: string[] } = {}): MiddlewareHandler<AppEnv> {
  const both = inSequence(limitBodies(options.limits), requireJsonBodies(options.formPaths, options.anyTypePaths));
  return (c, next) => {
    // Reading c.req.raw makes the Node adapter build a full Request (several times the cost of
    // a small request), so a GET that declares no body skips both checks. Body methods always
    // take them: a streamed body need not be declared in-process.
    if (!BODY_METHODS.has(c.req.method) && !declaresBody(c.req.header("content-length"), c.req.header("transfer-encoding"))) return next();
    // The size and type rules are a route's: a path no route takes is 404 whatever its body.
    if (!hasRoute(c)) return next();
    return both(c, next);
  };
}

/** Whether a route takes this method and path: app-wide middleware (`use`, method ALL) alone is none. */
export function hasRoute(c: Context): boolean {
  return matchedRoutes(c).some((r) => r.method !== METHOD_NAME_ALL);
}

/** Two middlewares run as one: `second` runs where `first` calls next(). */
export function inSequence(first: MiddlewareHandler<AppEnv>, second: MiddlewareHandler<AppEnv>): MiddlewareHandler<AppEnv> {
  return (c, next) =>
    first(c, async () => {
      await second(c, next);
    });
}

export interface BodyLimitOverride {
  prefix: string;
  maxBytes: number;
  /**
   * For bodies that are passed on as they arrive (proxied audio): an undeclared length is counted
   * while it streams instead of being read whole first, and the stream fails with a 413 ApiError
   * once it passes the limit.
   */
  stream?: boolean;
}

/** Bodies over the limit answer 413 whether or not the client sent a Content-Length (behind checkBodies). */
function limitBodies(overrides: BodyLimitOverride[] = []): MiddlewareHandler<AppEnv> {
  const onError = (): never => {
    throw new ApiError("payload_too_large", "request body exceeds the size limit");
  };
  const standard = bodyLimit({ maxSize: MAX_BODY_BYTES, onError });
  const special = overrides.map((o) => ({
    prefix: o.prefix,
    maxBytes: o.maxBytes,
    mw: o.stream ? countWhileStreaming(o.maxBytes) : bodyLimit({ maxSize: o.maxBytes, onError }),
  }));
  return (c, next) => {
    const length = c.req.header("content-length");
    const chunked = c.req.header("transfer-encoding") !== undefined;
    const override = special.find((s) => c.req.path.startsWith(s.prefix));
    // A declared length is checked from the header alone (the HTTP parser holds the body to it);
    // Hono's bodyLimit would first touch the raw body, which costs the Node adapter a full Request.
    if (length !== undefined && !chunked && /^\d+$/.test(length.trim())) {
      if (Number(length) > (override?.maxBytes ?? MAX_BODY_BYTES)) onError();
      return next();
    }
    return (override?.mw ?? standard)(c, next);
  };
}

function countWhileStreaming(maxBytes: number): MiddlewareHandler {
  return async (c, next) => {
    const body = c.req.raw.body;
    if (body) {
      let seen = 0;
      const counted = body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            seen += chunk.byteLength;
            if (seen > maxBytes) controller.error(new ApiError("payload_too_large", "request body exceeds the size limit"));
            else controller.enqueue(chunk);
          },
        }),
      );
      c.req.raw = new Request(c.req.raw, { body: counted, duplex: "half" } as RequestInit);
    }
    await next();
  };
}

const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i;

/**
 * Request bodies are JSON unless a path is listed as taking forms (e.g. file uploads) or any type. A body in
 * another type answers 400 naming the expected type instead of failing field validation.
 */
function requireJsonBodies(formPaths: string[] = [], anyTypePaths: string[] = []): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (BODY_METHODS.has(c.req.method) && carriesBody(c)) {
      // Bodies passed on untouched (proxied audio) keep whatever type the client gave them.
      if (anyTypePaths.some((p) => c.req.path.startsWith(p))) return next();
      const type = c.req.header("content-type") ?? "";
      const formAllowed = formPaths.some((p) => c.req.path.startsWith(p)) && /^(multipart\/form-data|application\/x-www-form-urlencoded)/i.test(type);
      if (!JSON_TYPE.test(type) && !formAllowed) {
        throw new ApiError("invalid_input", "Content-Type must be application/json", {
          details: [{ path: "(header) content-type", message: `expected application/json, got '${type.slice(0, 100) || "none"}'` }],
        });
      }
    }
    await next();
  };
}

/**
 * Whether the request has a body. A declared `Content-Length: 0` is none, although Workers hand
 * such a request an empty body stream (browsers and `wrangler dev` send the header on body-less
 * POSTs and DELETEs). Only a request that declares nothing (an in-process Request) is asked for
 * its stream.
 */
function carriesBody(c: Context<AppEnv>): boolean {
  const length = c.req.header("content-length");
  const encoding = c.req.header("transfer-encoding");
  if (length !== undefined || encoding !== undefined) return declaresBody(length, encoding);
  return c.req.raw.body !== null;
}

/** HTTP/1.1 frames a request body with Content-Length or Transfer-Encoding; without either there is none. */
function declaresBody(contentLength: string | undefined, transferEncoding: string | undefined): boolean {
  if (transferEncoding !== undefined) return true;
  return contentLength !== undefined && contentLength.trim() !== "0";
}
