import { z, type RouteConfig } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { ApiError, type ErrorCode } from "../../errors";
import type { AppEnv } from "../../http/env";
import { principalOf } from "../../http/auth";
import { invalidPartMessage, rejectUnsafeText, zodIssues } from "../../http/router";
import { ErrorBody, protectedRoute, withErrorBodies } from "../../http/routes";
import type { AiContext } from "../../services/ai/ask";
import { startContextRead, type ContextDeps } from "../../services/ai/context-cache";
import { DEFAULT_LANGUAGE, isLanguage, LANGUAGE_CODES } from "../../services/ai/languages";

export { AI_AGENTS_PREFIX } from "../../http/agents-host";

/**
 * Infrastructure shared by every route under /api/v1/ai-agents:
 * - `aiRoute(access, config, {usesContext})`: protectedRoute ("ai" counts the AI quota; "admin" for
 *   the context cache) plus `aiErrors`, which picks the request's language for its shape 2 errors
 *   (the error handler answers shape 2 under the AI prefix; what the authentication and rate-limit
 *   layer says, 401, 429 and the identity provider's 503, keeps shape 1). Routes that use the
 *   caller's AI context say so, and its read starts while the rate limiter decides.
 * - `aiValidation(forms)`: the validation hook that names the endpoint's own code (invalid_tone…).
 * - `Language`, `envelope`, `aiError`.
 */
export const aiErrors: MiddlewareHandler<AppEnv> = async (c, next) => {
  c.set("language", DEFAULT_LANGUAGE);
  if (c.req.method === "POST" && /json/i.test(c.req.header("content-type") ?? "")) {
    // Hono caches the parsed body, so the validator reads this same parse afterwards.
    const body = await c.req.json().catch(() => undefined);
    const language = body && typeof body === "object" ? (body as { language?: unknown }).language : undefined;
    const normal = typeof language === "string" ? language.trim().toLowerCase() : undefined;
    if (isLanguage(normal)) c.set("language", normal);
  }
  await next();
};

export const AiErrorBody = z
  .object({
    success: z.literal(false),
    error: z.object({ code: z.string().openapi({ example: "invalid_tone" }), message: z.string(), details: z.string(), language: z.string() }),
    timestamp: z.string(),
    requestId: z.string(),
  })
  .openapi("AiError");

const aiError = (description: string) => ({ description, content: { "application/json": { schema: AiErrorBody } } });

/** Starts reading the caller's AI context while the rate limiter decides (see startContextRead). */
const readContextEarly: MiddlewareHandler<AppEnv> = (c, next) => {
  c.set("contextRead", startContextRead(c.get("deps").kv, principalOf(c).userId));
  return next();
};

export function aiRoute<R extends Omit<RouteConfig, "security"> & { path: string }>(access: "ai" | "admin", config: R, options: { usesContext?: boolean } = {}) {
  const own = config.middleware === undefined ? [] : Array.isArray(config.middleware) ? config.middleware : [config.middleware];
  const responses = {
    500: aiError("The model's answer stayed invalid after one retry (`internal_error`)"),
    // Two layers answer 503 here, each in its own shape (docs/api/errors.md).
    503: {
      description: "No inference host answered in time (shape 2), or the identity provider could not hand over its keys (shape 1); `service_unavailable` either way",
      content: { "application/json": { schema: z.union([AiErrorBody, ErrorBody]) } },
    },
    ...(access === "admin" ? { 403: aiError("Authenticated, but not an admin") } : {}),
    ...(config.request?.body ? { 413: aiError("Body over 1 MiB (`payload_too_large`)") } : {}),
    ...withErrorBodies(config.responses, AiErrorBody),
  };
  return protectedRoute(
    access === "admin" ? "aiAdmin" : "ai",
    { ...config, middleware: [aiErrors, ...own], responses: { 400: aiError("Invalid input: `error.code` names the endpoint's own code"), ...responses } },
    { beforeLimit: options.usesContext ? [readContextEarly] : [] },
  );
}

/** A language code from the supported list, case-insensitive; English when absent. */
export const Language = z
  .preprocess((v) => (typeof v === "string" ? v.trim().toLowerCase() : v), z.string().refine(isLanguage, `one of ${LANGUAGE_CODES.join(", ")}`))
  .openapi({ type: "string", example: "en", description: `One of ${LANGUAGE_CODES.length} codes: ${LANGUAGE_CODES.join(", ")}` });

export interface Form {
  /** Whether a raw body is meant as this form (its distinguishing fields are present). */
  matches(body: Record<string, unknown>): boolean;
  schema: z.ZodType;
  /** Top-level field → endpoint code; other fields fail as invalid_input. */
  codes: Record<string, ErrorCode>;
}

/**
 * The validation hook of an AI route with a short and a detailed form. On failure it picks the
 * form the body was meant as (the first whose `matches` holds, else the last), validates against
 * that form alone, and answers its first failing field's endpoint code, all issues in `details`.
 */
export function aiValidation(forms: Form[]) {
  return (result: { success: boolean; target: string; error?: z.ZodError; data?: unknown }, _c: Context<AppEnv>): undefined => {
    if (result.success) {
      rejectUnsafeText(result.data, result.target);
      return undefined;
    }
    // The validator hands the hook the raw input beside the failure (its type omits it).
    const raw = (result as { data?: unknown }).data;
    if (result.target !== "json" || !raw || typeof raw !== "object" || Array.isArray(raw)) {
      throw new ApiError("invalid_input", invalidPartMessage(result.target), { details: result.error ? zodIssues(result.error) : undefined });
    }
    const body = raw as Record<string, unknown>;
    const form = forms.find((f) => f.matches(body)) ?? forms[forms.length - 1];
    const parsed = form?.schema.safeParse(body);
    const error = parsed && !parsed.success ? parsed.error : result.error;
    if (!error) throw new ApiError("invalid_input", invalidPartMessage("json"));
    const first = error.issues[0];
    const field = first?.path[0];
    const code: ErrorCode = first?.code === "unrecognized_keys" ? "invalid_input" : ((typeof field === "string" && form?.codes[field]) || "invalid_input");
    throw new ApiError(code, undefined, { details: zodIssues(error) });
  };
}

/** The success envelope of the AI routes. */
export function envelope<T>(c: Context<AppEnv>, data: T) {
  return c.json({ success: true as const, data, timestamp: new Date(c.get("deps").clock.now()).toISOString() }, 200);
}

export const Metadata = z
  .object({
    model_version: z.string(),
    processing_time: z.number().int().openapi({ description: "Milliseconds" }),
    tokens_used: z.number().int(),
    language: z.string(),
  })
  .openapi("AiMetadata");

export function envelopeSchema<T extends z.ZodType>(name: string, data: T) {
  return z.object({ success: z.literal(true), data, timestamp: z.string() }).openapi(name);
}

/** The request's view for AI services: the port, the request's abort signal, its start time. */
export function aiContextOf(c: Context<AppEnv>): AiContext {
  // c.get, not c.var: Hono builds a fresh object of every variable on each c.var read.
  const [deps, runtime] = [c.get("deps"), c.get("runtime")];
  return { inference: runtime.inference, random: deps.random, clock: deps.clock, signal: c.req.raw.signal, startedAt: deps.clock.now() };
}

export function contextDepsOf(c: Context<AppEnv>): ContextDeps {
  const deps = c.get("deps");
  return { kv: deps.kv, db: c.get("db"), now: deps.clock.now(), logger: deps.logger, pendingRead: c.get("contextRead") };
}

export const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
