import { hasUnsafeText } from "../platform/text";
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

/** Far deeper than any schema of ours nests; the walk stops there instead of exhausting the stack. */
const MAX_DEPTH = 64;

const TARGET_NAMES: Record<string, string> = {
  json: "request body",
  form: "form fields",
  query: "query parameters",
  param: "path parameters",
  header: "headers",
  cookie: "cookies",
};

/**
 * The message of a validation failure, naming the part of the request in a client's words
 * ("invalid json" read as if the body were not JSON at all; that is `malformed JSON body`).
 */
export function invalidPartMessage(target: string): string {
  return `invalid ${TARGET_NAMES[target] ?? target}`;
}

const UNSAFE_MESSAGE = "text must be valid Unicode without NUL characters";

/**
 * The first problem in a validated value, its path built on one stack (the common answer, none,
 * allocates nothing). An uploaded file's name is text like any other field.
 */
function findUnsafe(value: unknown, path: string[]): string | undefined {
  if (typeof value === "string") return hasUnsafeText(value) ? UNSAFE_MESSAGE : undefined;
  if (value === null || typeof value !== "object") return undefined;
  if (typeof File !== "undefined" && value instanceof File) return hasUnsafeText(value.name) ? UNSAFE_MESSAGE : undefined;
  if (path.length >= MAX_DEPTH) return `nested deeper than ${MAX_DEPTH} levels`;
  const keys = Array.isArray(value) ? undefined : Object.keys(value);
  const count = keys ? keys.length : (value as unknown[]).length;
  for (let i = 0; i < count; i++) {
    const key = keys ? (keys[i] as string) : String(i);
    path.push(key);
    const found = hasUnsafeText(key) ? UNSAFE_MESSAGE : findUnsafe((value as Record<string, unknown>)[key], path);
    if (found) return found;
    path.pop();
  }
  return undefined;
}

/**
 * Input that passed its schema still answers 400 when a string in it holds NUL or an unpaired
 * surrogate: otherwise the database refuses it deep inside a service, or an encoder throws on it,
 * and the caller sees a 500. Walks the validated value, which the schemas bound.
 */
export function rejectUnsafeText(value: unknown, target: string): void {
  const path: string[] = [];
  const message = findUnsafe(value, path);
  if (!message) return;
  throw new ApiError("invalid_input", invalidPartMessage(target), { details: [{ path: path.length ? path.join(".") : "(root)", message }] });
}

/**
 * Every feature router is made here, so a failed validation anywhere takes the one error path
 * (shape 1 with `details`, or shape 2 on AI routes) instead of the library's default body.
 */
export function createRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        throw new ApiError("invalid_input", invalidPartMessage(result.target), { details: zodIssues(result.error) });
      }
      rejectUnsafeText(result.data, result.target);
    },
  });
}

/** A required JSON body: without `required`, a request with another content type skips validation. */
export function jsonBody<T extends z.ZodType>(schema: T, description = "JSON body") {
  return { required: true, description, content: { "application/json": { schema } } } as const;
}
