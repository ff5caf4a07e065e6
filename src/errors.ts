/**
 * One error class for the whole API. The code→status map is closed: a code that is not
 * listed here cannot be thrown, so clients can rely on the documented set.
 */
export const ERROR_STATUS = {
  invalid_input: 400,
  // Endpoint-specific AI validation codes (api-spec "Errors"); decisions.md pins them to 400.
  invalid_profile: 400,
  missing_interests: 400,
  invalid_language: 400,
  invalid_message: 400,
  missing_context: 400,
  invalid_tone: 400,
  invalid_bio_length: 400,
  unauthorized: 401,
  forbidden: 403,
  /** The caller's account is deleted: only its restore is answered (docs/api/account.md). */
  account_deleted: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  /** If-Match named a version that is no longer current. */
  precondition_failed: 412,
  /** A write that must name the version it replaces came without If-Match. */
  precondition_required: 428,
  insufficient_funds: 422,
  insufficient_data: 422,
  rate_limit_exceeded: 429,
  internal_error: 500,
  /** A payment provider failed or timed out; our record of the payment stays consistent. */
  provider_error: 502,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export type ErrorStatus = (typeof ERROR_STATUS)[ErrorCode];

const DEFAULT_MESSAGE: Record<ErrorCode, string> = {
  invalid_input: "invalid input",
  invalid_profile: "profile text missing or too short",
  missing_interests: "no interests given",
  invalid_language: "unsupported language code",
  invalid_message: "message missing or too short",
  missing_context: "no context given",
  invalid_tone: "unsupported tone",
  invalid_bio_length: "bio must be 10 to 500 characters",
  unauthorized: "invalid or missing key",
  forbidden: "forbidden",
  account_deleted: "this account is deleted; POST /api/v1/account/restore undoes it within 30 days",
  not_found: "not found",
  conflict: "conflict",
  payload_too_large: "request body too large",
  precondition_failed: "the resource changed since the version named in If-Match",
  precondition_required: "If-Match is required",
  insufficient_funds: "insufficient funds",
  insufficient_data: "not enough data",
  rate_limit_exceeded: "rate limit exceeded",
  internal_error: "internal error",
  provider_error: "the payment provider failed",
  service_unavailable: "service unavailable",
};

export interface FieldIssue {
  path: string;
  message: string;
}

export interface ApiErrorOptions {
  /**
   * Shape 1 carries field issues only (validation failures, as decisions.md has it); a sentence
   * belongs in the message. A string is for shape 2, whose `details` is one.
   */
  details?: FieldIssue[] | string;
  /** Seconds; only meaningful on rate_limit_exceeded. */
  retryAfter?: number;
  headers?: Record<string, string>;
  cause?: unknown;
  /**
   * The request's effect may have happened even though it failed (a provider call whose outcome
   * is unknown). An idempotent retry must then replay this answer instead of doing it again.
   */
  effectMayExist?: boolean;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: ErrorStatus;
  readonly details?: FieldIssue[] | string;
  readonly retryAfter?: number;
  readonly headers: Record<string, string>;
  readonly effectMayExist: boolean;

  constructor(code: ErrorCode, message?: string, options: ApiErrorOptions = {}) {
    super(message ?? DEFAULT_MESSAGE[code], options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ApiError";
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = options.details;
    this.retryAfter = options.retryAfter;
    this.headers = options.headers ?? {};
    this.effectMayExist = options.effectMayExist ?? false;
  }
}

/** What an error answer is built from: an ApiError, or the same fields without the Error around them. */
export type ErrorAnswer = Pick<ApiError, "code" | "status" | "message" | "details" | "retryAfter" | "headers">;

export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError;
}

/** Maps an HTTP status that a library raised (e.g. Hono's HTTPException) onto our closed set. */
export function codeForStatus(status: number): ErrorCode {
  switch (status) {
    case 400: return "invalid_input";
    case 401: return "unauthorized";
    case 403: return "forbidden";
    case 404: return "not_found";
    case 409: return "conflict";
    case 412: return "precondition_failed";
    case 413: return "payload_too_large";
    case 428: return "precondition_required";
    case 429: return "rate_limit_exceeded";
    case 503: return "service_unavailable";
    default: return status >= 400 && status < 500 ? "invalid_input" : "internal_error";
  }
}

/** Shape 1 of the spec, used by every non-AI route. */
export interface StandardErrorBody {
  error: ErrorCode;
  message: string;
  code: number;
  requestId: string;
  details?: FieldIssue[] | string;
  retry_after?: number;
}

/** Shape 2 of the spec, used by the AI routes. */
export interface AiErrorBody {
  success: false;
  error: { code: ErrorCode; message: string; details: string; language: string };
  timestamp: string;
  requestId: string;
}

export function standardBody(err: ErrorAnswer, requestId: string): StandardErrorBody {
  const body: StandardErrorBody = { error: err.code, message: err.message, code: err.status, requestId };
  if (err.details !== undefined) body.details = err.details;
  if (err.code === "rate_limit_exceeded" && err.retryAfter !== undefined) body.retry_after = err.retryAfter;
  return body;
}

export function aiBody(err: ErrorAnswer, requestId: string, language: string, now: Date): AiErrorBody {
  const details =
    err.details === undefined ? "" : typeof err.details === "string" ? err.details : err.details.map((d) => `${d.path}: ${d.message}`).join("; ");
  return {
    success: false,
    error: { code: err.code, message: err.message, details, language },
    timestamp: now.toISOString(),
    requestId,
  };
}
