import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors";
import { checkRate, releaseAiSlot } from "../services/rate-limit/limiter";
import type { AppEnv } from "./env";
import { principalOf } from "./auth";
import { defer } from "./defer";

/**
 * Per caller (user, or API key) and plan tier. When the store cannot answer, the request is
 * served: losing rate limiting for a moment is better than losing the API. Each such failure
 * is logged and counted.
 */
export function rateLimit(kind: "general" | "ai"): MiddlewareHandler<AppEnv> {
  const ai = kind === "ai";
  return async (c, next) => {
    // c.get, not c.var: Hono builds a fresh object of every variable on each c.var read.
    const [deps, runtime, db, requestId] = [c.get("deps"), c.get("runtime"), c.get("db"), c.get("requestId")];
    const principal = principalOf(c);
    const subject = principal.keyId ? `key:${principal.keyId}` : `user:${principal.userId}`;
    const member = deps.ids.next("rl");
    let counted = false;
    try {
      const tier = await runtime.tiers.tierOf(db, principal.userId);
      const outcome = await checkRate(deps.kv, { subject, tier, ai, now: deps.clock.now(), member });
      counted = true;
      for (const [name, value] of Object.entries(outcome.headers)) c.header(name, value);
      // Usually nothing is there yet: no copy on every request for the rare old-key Warning.
      const prior = c.get("answerHeaders");
      c.set("answerHeaders", prior ? { ...prior, ...outcome.headers } : outcome.headers);
    } catch (err) {
      if (err instanceof ApiError) throw err;
      runtime.metrics.rateLimitFailOpen += 1;
      deps.logger.error("rate limit check failed; serving the request", { requestId, failOpenTotal: runtime.metrics.rateLimitFailOpen, err: String(err) });
    }
    try {
      await next();
    } finally {
      if (ai && counted) {
        const streaming = c.get("responseDone");
        const release = () => releaseAiSlot(deps.kv, subject, member, deps.clock.now());
        defer(c, streaming ? streaming.then(release, release) : release(), "AI slot release");
      }
    }
  };
}
