import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { ApiError, aiBody, codeForStatus, standardBody, type ErrorAnswer } from "../errors";
import { isAiPath } from "./agents-host";
import type { AppEnv } from "./env";
import { loggedError } from "../platform/logged-error";

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof HTTPException) {
    const code = codeForStatus(err.status);
    // Hono raises 400 with this text for a body that is not valid JSON.
    if (/malformed json/i.test(err.message)) {
      return new ApiError("invalid_input", "malformed JSON body", { cause: err, details: [{ path: "(body)", message: "not valid JSON" }] });
    }
    return new ApiError(code, code === "internal_error" ? undefined : err.message || undefined, { cause: err });
  }
  return new ApiError("internal_error", undefined, { cause: err });
}

function respond(c: Context<AppEnv>, err: ErrorAnswer): Response {
  c.set("requestIdOnResponse", true);
  return errorResponse(
    {
      requestId: c.get("requestId") ?? "unknown",
      path: c.req.path,
      answerHeaders: c.get("answerHeaders"),
      language: c.get("language"),
      refusedBy: c.get("refusedBy"),
      nowMs: c.get("deps")?.clock.now(),
    },
    err,
  );
}

/** What an error answer is built from besides the error: the request as far as it got. */
export interface AnswerMeta {
  requestId: string;
  path: string;
  answerHeaders?: Record<string, string>;
  language?: string;
  nowMs?: number;
  /** Which layer refused the request, when it was the authentication and rate-limit layer. */
  refusedBy?: "access";
}

/** An error answer in the shape its path asks for, with the request id in body and header. */
export function errorResponse(meta: AnswerMeta, err: ErrorAnswer): Response {
  const { requestId } = meta;
  const headers: Record<string, string> = { "content-type": "application/json", "x-request-id": requestId };
  // The request was counted against the caller's limits before it failed (and an old key still
  // wants rotating): its answer says so too.
  // Names are lower-cased: two spellings of one header in a plain record would both be written
  // (a client then reads "5, 5" for Retry-After).
  const always = meta.answerHeaders;
  if (always) for (const name in always) headers[name.toLowerCase()] = always[name] as string;
  for (const name in err.headers) headers[name.toLowerCase()] = err.headers[name] as string;
  if (err.code === "rate_limit_exceeded" && err.retryAfter !== undefined) headers["retry-after"] = String(err.retryAfter);
  const body = answersInAiShape(meta.path, meta.refusedBy)
    ? JSON.stringify(aiBody(err, requestId, meta.language ?? "en", new Date(meta.nowMs ?? Date.now())))
    : JSON.stringify(standardBody(err, requestId));
  return new Response(body, { status: err.status, headers });
}

/**
 * decisions.md: what the authentication and rate-limit layer says (401, 429, 503 when the identity
 * provider cannot be reached) is shape 1 on every route; under the AI prefix everything else (the
 * shared body checks, the admin check, the route itself, an unknown path) is shape 2. Decided by
 * the layer that refused and the path, not by status: the AI routes' own 503 (no inference host)
 * is shape 2, the identity provider's is shape 1.
 */
function answersInAiShape(path: string, refusedBy: "access" | undefined): boolean {
  return refusedBy !== "access" && isAiPath(path);
}

/** The one error path: every thrown error, validation failure and library exception ends here. */
export const onError: ErrorHandler<AppEnv> = (err, c) => {
  const apiError = toApiError(err);
  if (apiError.status >= 500) {
    const original = err instanceof ApiError && err.cause !== undefined ? err.cause : err;
    c.get("deps")?.logger.error("request failed", {
      requestId: c.get("requestId"),
      code: apiError.code,
      error: loggedError(original),
    });
  }
  return respond(c, apiError);
};

const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** The answer to a method and path no route takes. */
export function unmatchedError(method: string, path: string): ErrorAnswer {
  return { code: "not_found", status: 404, message: `no route for ${method} ${truncate(path)}`, headers: NO_HEADERS };
}

// An unmatched path is an answer, not a fault: built without an Error object around it.
export const notFound: NotFoundHandler<AppEnv> = (c) => respond(c, unmatchedError(c.req.method, c.req.path));

function truncate(path: string): string {
  return path.length > 120 ? `${path.slice(0, 120)}…` : path;
}
