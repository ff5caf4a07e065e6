import type { Context } from "hono";
import type { AppEnv } from "./env";

/**
 * Work that may finish after the response. Workers keep it alive through waitUntil; Node has no
 * execution context and simply lets the promise run. Failures are logged, never thrown.
 */
export function defer(c: Context<AppEnv>, work: Promise<unknown>, what: string): void {
  const guarded = work.catch((err: unknown) => c.var.deps.logger.warn(`${what} failed`, { requestId: c.var.requestId, err: String(err) }));
  try {
    c.executionCtx.waitUntil(guarded);
  } catch {
    // Node: nothing to register with.
  }
}
