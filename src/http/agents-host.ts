import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors";
import type { AppEnv } from "./env";

export const AI_AGENTS_PREFIX = "/api/v1/ai-agents";

/** The prefix itself or a path under it (not a path that merely starts with the same letters). */
export function isAiPath(path: string): boolean {
  return path.startsWith(AI_AGENTS_PREFIX) && (path.length === AI_AGENTS_PREFIX.length || path[AI_AGENTS_PREFIX.length] === "/");
}

/** Host header without its port, lower-cased; IPv6 literals keep their brackets. */
export function hostName(header: string | undefined): string {
  const h = (header ?? "").trim().toLowerCase();
  if (h.startsWith("[")) return h.slice(0, h.indexOf("]") + 1);
  const colon = h.indexOf(":");
  return (colon === -1 ? h : h.slice(0, colon)).replace(/\.$/, "");
}

/**
 * The agents host serves the AI routes and nothing else: any other path asked under that Host
 * answers 404 as if it did not exist (the platform's other routes are not revealed there).
 */
export function agentsHostOnly(agentsHost: string): MiddlewareHandler<AppEnv> {
  const wanted = hostName(agentsHost);
  return async (c, next) => {
    // The Node adapter builds the URL from the Host header; an in-process request has only the URL.
    if (hostName(c.req.header("host") ?? new URL(c.req.url).host) === wanted) {
      const path = c.req.path;
      if (!isAiPath(path)) {
        throw new ApiError("not_found", `no route for ${c.req.method} ${path.length > 120 ? `${path.slice(0, 120)}…` : path}`);
      }
    }
    await next();
  };
}
