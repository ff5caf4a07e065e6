import { Hono, type Context } from "hono";
import { getCookie } from "hono/cookie";
import { callPlatformAgent } from "../../services/platform-agent/proxy";
import type { CookieSettings } from "../cookies";
import type { WebEnv } from "../env";
import { sameOriginOnly } from "../security";

/** What the browser sends that the API may see; never its cookies. */
const TO_API = ["content-type", "accept", "accept-language", "idempotency-key"];
/** What the API answers that the browser may see. */
const FROM_API = ["content-type", "retry-after", "warning", "idempotency-replayed", "x-request-id", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"];

/**
 * The browser's wallet and agent calls: the session's access token goes on as the bearer (the
 * browser never sees it), refreshed first when it has expired.
 */
export function proxyRoutes(settings: CookieSettings) {
  const routes = new Hono<WebEnv>();

  const bearer = async (c: Context<WebEnv>) => {
    const found = await c.var.sessions.bearer({ session: getCookie(c, settings.names.session), refresh: getCookie(c, settings.names.refresh) }, c.var.requestId);
    for (const cookie of found.setCookies) c.header("Set-Cookie", cookie, { append: true });
    return found.token;
  };

  const forward = async (c: Context<WebEnv>, path: string) => {
    const token = await bearer(c);
    const headers = new Headers({ authorization: `Bearer ${token}`, "x-request-id": c.var.requestId });
    for (const name of TO_API) {
      const value = c.req.header(name);
      if (value !== undefined) headers.set(name, value);
    }
    const hasBody = c.req.method === "POST";
    const answer = await c.var.deps.api(path, { method: c.req.method, headers, body: hasBody ? await c.req.arrayBuffer() : undefined, redirect: "manual" });
    const out: Record<string, string> = { "cache-control": "no-store" };
    for (const name of FROM_API) {
      const value = answer.headers.get(name);
      if (value !== null) out[name] = value;
    }
    return answer.body ? c.body(answer.body, answer.status as 200, out) : c.body(null, answer.status as 200, out);
  };

  routes.get("/api/wallet/overview", (c) => forward(c, "/api/v1/wallet/overview"));
  routes.get("/api/wallet/transactions", (c) => forward(c, `/api/v1/wallet/transactions${new URL(c.req.url).search}`));
  routes.post("/api/wallet/transfer", sameOriginOnly, (c) => forward(c, "/api/v1/wallet/transfer"));

  routes.post("/api/agent", sameOriginOnly, async (c) => {
    const { deps } = c.var;
    const token = await bearer(c);
    const answer = await callPlatformAgent(
      { url: deps.config.PLATFORM_AGENT_URL, fetch: deps.fetch, logger: deps.logger, timeoutMs: deps.config.PLATFORM_AGENT_TIMEOUT_MS },
      { accessToken: token, headers: c.req.raw.headers, body: c.req.raw.body, requestId: c.var.requestId, signal: c.req.raw.signal },
    );
    const headers = { ...answer.headers, "cache-control": "no-store" };
    return answer.body ? c.body(answer.body, answer.status as 200, headers) : c.body(null, answer.status as 200, headers);
  });

  return routes;
}
