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
    },
  });
}

/** A required JSON body: without `required`, a request with another content type skips validation. */
export function jsonBody<T extends z.ZodType>(schema: T, description = "JSON body") {
  return { required: true, description, content: { "application/json": { schema } } } as const;
}
