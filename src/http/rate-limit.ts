import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors";
import { checkRate, releaseAiSlot, renewAiSlot } from "../services/rate-limit/limiter";
import { AI_LEASE_MS } from "../services/rate-limit/limits";
import type { AppEnv } from "./env";
import { principalOf } from "./auth";
import { defer, deferOnSession } from "./defer";
import { deletedMarkerKey } from "../services/account/markers";

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
      const tier = await runtime.tiers.tierOf(db, principal.userId, (work) => deferOnSession(c, work, "tier refresh"));
      const outcome = await checkRate(deps.kv, { subject, tier, ai, now: deps.clock.now(), member, deletedMarker: deletedMarkerKey(principal.userId) });
      if (outcome.reply.accountDeleted) {
        // The deletion as another instance made it, ahead of this one's identity cache.
        if (!c.get("deletedToo")) throw new ApiError("account_deleted");
        return next();
      }
      counted = true;
      for (const [name, value] of Object.entries(outcome.headers)) c.header(name, value);
      // Usually nothing is there yet: no copy on every request for the rare old-key Warning.
      const prior = c.get("answerHeaders");
      c.set("answerHeaders", prior ? { ...prior, ...outcome.headers } : outcome.headers);
    } catch (err) {
      if (err instanceof ApiError) {
        c.set("refusedBy", "access");
        throw err;
      }
      runtime.metrics.rateLimitFailOpen += 1;
      deps.logger.error("rate limit check failed; serving the request", { requestId, failOpenTotal: runtime.metrics.rateLimitFailOpen, err: String(err) });
    }
    if (!(ai && counted)) return next();
    const release = () => releaseAiSlot(deps.kv, subject, member, deps.clock.now());
    // On Workers a request whose client goes away is cancelled where it stands: the code after
    // next() never runs, and the slot would stay taken until its lease ends. The abort event
    // still runs (compatibility flag enable_request_signal), so the release is tied to it too.
    const signal = c.req.raw.signal;
    let released = false;
    const onAbort = () => {
      if (released) return;
      released = true;
      defer(c, release(), "AI slot release");
    };
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      await next();
    } finally {
      signal.removeEventListener("abort", onAbort);
      if (!released) {
        released = true;
        // A streamed answer keeps its slot (renewed) until the stream ends.
        const streaming = c.get("responseDone");
        const renew = () => renewAiSlot(deps.kv, subject, member, deps.clock.now());
        defer(c, streaming ? holdSlotUntil(streaming, renew).then(release) : release(), "AI slot release");
      }
    }
  };
}

/**
 * Keeps renewing a streamed answer's AI slot until the stream ends: the lease frees a dead
 * instance's slots after AI_LEASE_MS, and a voice stream may last longer than that. The release
 * waits for a renewal in flight, so the two cannot cross.
 */
export async function holdSlotUntil(done: Promise<unknown>, renew: () => Promise<unknown>): Promise<void> {
  let pending: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    pending = renew().catch(() => undefined);
  }, AI_LEASE_MS / 2);
  try {
    await done;
  } catch {
    // A stream that failed has ended too.
  } finally {
    clearInterval(timer);
    await pending;
  }
}
