import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { getCookie } from "hono/cookie";
import { ApiError, codeForStatus, isApiError } from "../errors";
import { errorResponse } from "../http/error-handler";
import { MAX_BODY_BYTES, requestIdFor } from "../http/middleware";
import { cookieSettings, deriveCookieKeys } from "./cookies";
import type { WebDeps } from "./deps";
import type { WebEnv } from "./env";
import { createOidcClient } from "./oidc";
import { memberPage } from "./page";
import { authRoutes } from "./routes/auth";
import { proxyRoutes } from "./routes/proxy";
import { securityHeaders } from "./security";
import { createSessionStore } from "./session";

/**
 * The web app's factory, beside the API's createApp: sign-in with OpenID Connect, the session in
 * two encrypted cookies, and the browser's wallet and agent calls forwarded with the session's
 * access token. The Workers entry, the Node entry and the tests build it from their own deps.
 */
export async function createWebApp(deps: WebDeps): Promise<Hono<WebEnv>> {
  const settings = cookieSettings(deps.config.WEB_ORIGIN);
  const keys = await deriveCookieKeys(deps.config.WEB_COOKIE_SECRET);
  const oidc = createOidcClient(deps.config, { fetch: deps.fetch, now: () => deps.clock.now() });
  const sessions = createSessionStore({ keys, settings, oidc, clock: deps.clock, logger: deps.logger, maxAgeSeconds: deps.config.WEB_SESSION_MAX_AGE_SECONDS });

  const app = new Hono<WebEnv>();
  app.use("*", async (c, next) => {
    const started = deps.clock.now();
    c.set("deps", deps);
    c.set("oidc", oidc);
    c.set("sessions", sessions);
    c.set("requestId", requestIdFor(deps, c.req.header("x-request-id")));
    await next();
    c.header("X-Request-Id", c.var.requestId);
    deps.logger.info("request", { requestId: c.var.requestId, method: c.req.method, path: c.req.path, status: c.res.status, ms: deps.clock.now() - started });
  });
  app.use("*", securityHeaders);
  app.use("*", bodyLimit({ maxSize: MAX_BODY_BYTES, onError: () => { throw new ApiError("payload_too_large", "request body too large"); } }));

  app.get("/", async (c) => {
    const signedIn = await sessions.isSignedIn({ session: getCookie(c, settings.names.session), refresh: getCookie(c, settings.names.refresh) });
    c.header("Cache-Control", "no-store");
    return c.html(memberPage(c.var.nonce, signedIn));
  });
  app.get("/health", (c) => c.json({ status: "ok" }));
  app.route("/", authRoutes(settings, keys));
  app.route("/", proxyRoutes(settings));

  app.notFound((c) => answer(c, new ApiError("not_found", `no route for ${c.req.method} ${c.req.path}`)));
  app.onError((err, c) => {
    if (isApiError(err)) return answer(c, err);
    const status = (err as { status?: unknown }).status;
    if (typeof status === "number" && status >= 400 && status < 500) return answer(c, new ApiError(codeForStatus(status)));
    deps.logger.error("unhandled error", { requestId: c.var.requestId, error: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err) });
    return answer(c, new ApiError("internal_error"));
  });
  return app;

  /** Shape 1 with the request id; a 401 also ends the browser's session (its cookies cleared). */
  function answer(c: import("hono").Context<WebEnv>, err: ApiError): Response {
    const res = errorResponse({ requestId: c.var.requestId, path: c.req.path }, err);
    const headers = new Headers(res.headers);
    for (const [name, value] of c.res.headers) if (name !== "content-type" && name !== "content-length") headers.append(name, value);
    if (err.status === 401) for (const cookie of sessions.clear()) headers.append("Set-Cookie", cookie);
    return new Response(res.body, { status: res.status, headers });
  }
}

export type WebApp = Awaited<ReturnType<typeof createWebApp>>;
