import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors";
import { timingSafeEqual } from "../platform/hash";
import type { AppEnv } from "./env";

/**
 * VM agents authenticate with the shared `X-Observability-Token`. Without the secret configured
 * the route is closed (503), never open.
 */
export const observabilityToken: MiddlewareHandler<AppEnv> = async (c, next) => {
  const expected = c.var.deps.config.OBSERVABILITY_TOKEN;
  if (!expected) throw new ApiError("service_unavailable", "observability token is not configured");
  const presented = c.req.header("x-observability-token");
  if (!presented) throw new ApiError("unauthorized", "missing key");
  if (!(await timingSafeEqual(presented, expected))) throw new ApiError("unauthorized", "invalid key");
  await next();
};
