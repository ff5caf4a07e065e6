import type { Context } from "hono";
import type { AppEnv } from "./env";

/**
 * Work that may finish after the response. Workers keep it alive through waitUntil; Node has no
 * execution context and simply lets the promise run. Failures are logged, never thrown.
 */
export function defer(c: Context<AppEnv>, work: Promise<unknown>, what: string): void {
  const guarded = work.catch((err: unknown) => c.get("deps").logger.warn(`${what} failed`, { requestId: c.get("requestId"), err: String(err) }));
  // c.get, not c.var: Hono builds a fresh object of every variable on each c.var read.
  const runtime = c.get("runtime");
  // Hono's getter throws where there is no execution context; throwing on every request is
  // costly, so the answer is remembered: a process is either a Worker or it is not.
  if (runtime.hasExecutionContext === false) return;
  try {
    c.executionCtx.waitUntil(guarded);
    runtime.hasExecutionContext = true;
  } catch {
    runtime.hasExecutionContext = false;
  }
}

/**
 * Deferred work that uses the request's database session: the session is released only after it
 * has settled. On Workers each request's session is its own pool, ended with the request; a query
 * still waiting for a connection then would fail.
 */
export function deferOnSession(c: Context<AppEnv>, work: Promise<unknown>, what: string): void {
  c.get("sessionWork")?.push(work);
  defer(c, work, what);
}
