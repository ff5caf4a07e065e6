import { OpenAPIHono } from "@hono/zod-openapi";
import type { z } from "zod";
import { ApiError, type FieldIssue } from "../errors";
import type { AppEnv } from "./env";

export function zodIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.length ? issue.path.map(String).join(".") : "(root)",
    message: issue.message,
  }));
}

/** NUL, which Postgres text cannot hold, and unpaired surrogates, which are not text at all. */
const UNSAFE_TEXT = /[\u0000\p{Cs}]/u;
/** Far deeper than any schema of ours nests; the walk stops there instead of exhausting the stack. */
const MAX_DEPTH = 64;

function findUnsafe(value: unknown, path: string[]): { path: string[]; message: string } | undefined {
  if (typeof value === "string") return UNSAFE_TEXT.test(value) ? { path, message: "text must be valid Unicode without NUL characters" } : undefined;
  if (value === null || typeof value !== "object") return undefined;
  if (path.length >= MAX_DEPTH) return { path, message: `nested deeper than ${MAX_DEPTH} levels` };
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
  for (const [key, inner] of entries) {
    if (UNSAFE_TEXT.test(key)) return { path: [...path, key], message: "text must be valid Unicode without NUL characters" };
    const found = findUnsafe(inner, [...path, key]);
    if (found) return found;
  }
  return undefined;
}

/**
 * Input that passed its schema still answers 400 when a string in it holds NUL or an unpaired
 * surrogate: otherwise the database refuses it deep inside a service, or an encoder throws on it,
 * and the caller sees a 500. Walks the validated value, which the schemas bound.
 */
export function rejectUnsafeText(value: unknown, target: string): void {
  const found = findUnsafe(value, []);
  if (!found) return;
  throw new ApiError("invalid_input", `invalid ${target}`, { details: [{ path: found.path.length ? found.path.join(".") : "(root)", message: found.message }] });
}

/**
 * Every feature router is made here, so a failed validation anywhere takes the one error path
 * (shape 1 with `details`, or shape 2 on AI routes) instead of the library's default body.
 */
export function createRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        throw new ApiError("invalid_input", `invalid ${result.target}`, { details: zodIssues(result.error) });
      }
      rejectUnsafeText(result.data, result.target);
    },
  });
}

/** A required JSON body: without `required`, a request with another content type skips validation. */
export function jsonBody<T extends z.ZodType>(schema: T, description = "JSON body") {
  return { required: true, description, content: { "application/json": { schema } } } as const;
}
