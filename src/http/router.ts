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

function unsafeTextPath(value: unknown, path: string[]): string[] | undefined {
  if (typeof value === "string") return UNSAFE_TEXT.test(value) ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unsafeTextPath(value[i], [...path, String(i)]);
      if (found) return found;
    }
  } else if (value !== null && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) {
      const found = unsafeTextPath(inner, [...path, key]) ?? (UNSAFE_TEXT.test(key) ? [...path, key] : undefined);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Input that passed its schema still answers 400 when a string in it holds NUL or an unpaired
 * surrogate: otherwise the database refuses it deep inside a service, or an encoder throws on it,
 * and the caller sees a 500. Walks the validated value only, which the schema has bounded.
 */
export function rejectUnsafeText(value: unknown, target: string): void {
  const path = unsafeTextPath(value, []);
  if (!path) return;
  throw new ApiError("invalid_input", `invalid ${target}`, {
    details: [{ path: path.length ? path.join(".") : "(root)", message: "text must be valid Unicode without NUL characters" }],
  });
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
