import { Hono, type Context } from "hono";
import { getCookie } from "hono/cookie";
import { ApiError } from "../../errors";
import { clearCookieHeader, cookieHeader, seal, unseal, type CookieKeys, type CookieSettings } from "../cookies";
import type { WebEnv } from "../env";
import { IssuerUnreachable, SignInRefused } from "../oidc";
import { safeReturnTo } from "../return-to";
import { sameOriginOnly } from "../security";
import { signInFailedPage } from "../page";

/** How long a started sign-in may take at the issuer before its checks expire. */
export const SIGNIN_TTL_SECONDS = 600;

interface SignInPayload extends Record<string, unknown> {
  cv: string;
  st: string;
  n: string;
  rt: string;
}

export function authRoutes(settings: CookieSettings, keys: CookieKeys) {
  const routes = new Hono<WebEnv>();
  const cookiesOf = (c: Context<WebEnv>) => ({ session: getCookie(c, settings.names.session), refresh: getCookie(c, settings.names.refresh) });

  routes.get("/api/auth/login", async (c) => {
    const { deps, oidc } = c.var;
    const returnTo = safeReturnTo(c.req.query("returnTo"), deps.config.WEB_ORIGIN);
    const started = await unreachableAs503(c.var.requestId, deps.logger, () => oidc.startSignIn());
    const flow = await seal(keys.signin, { cv: started.codeVerifier, st: started.state, n: started.nonce, rt: returnTo }, deps.clock.now(), SIGNIN_TTL_SECONDS);
    c.header("Set-Cookie", cookieHeader(settings, "signin", flow, SIGNIN_TTL_SECONDS), { append: true });
    c.header("Cache-Control", "no-store");
    return c.redirect(started.url.href, 302);
  });

  routes.get("/api/auth/callback", async (c) => {
    const { deps, oidc, sessions } = c.var;
    c.header("Cache-Control", "no-store");
    // The started sign-in is spent whatever happens next.
    c.header("Set-Cookie", clearCookieHeader(settings, "signin"), { append: true });
    const flow = await unseal<SignInPayload>(keys.signin, getCookie(c, settings.names.signin), deps.clock.now());
    if (!flow || typeof flow.cv !== "string" || typeof flow.st !== "string" || typeof flow.n !== "string") {
      deps.logger.info("sign-in callback without a started sign-in", { requestId: c.var.requestId });
      return c.html(signInFailedPage(c.var.nonce, "This sign-in has expired or was started elsewhere."), 400);
    }
    // Built from WEB_ORIGIN, never from the request's Host: it is the redirect URI the issuer checks.
    const callbackUrl = new URL(`${oidc.redirectUri}${new URL(c.req.url).search}`);
    try {
      const tokens = await oidc.finishSignIn(callbackUrl, { codeVerifier: flow.cv, state: flow.st, nonce: flow.n });
      for (const cookie of await sessions.cookiesFor(tokens)) c.header("Set-Cookie", cookie, { append: true });
    } catch (err) {
      if (err instanceof IssuerUnreachable) {
        deps.logger.error("identity provider unavailable at the callback", { requestId: c.var.requestId, reason: err.message });
        return c.html(signInFailedPage(c.var.nonce, "The sign-in service cannot be reached. Try again shortly."), 503);
      }
      if (!(err instanceof SignInRefused)) throw err;
      deps.logger.info("sign-in refused", { requestId: c.var.requestId, reason: err.message });
      return c.html(signInFailedPage(c.var.nonce, "The sign-in could not be completed."), 400);
    }
    return c.redirect(safeReturnTo(flow.rt, deps.config.WEB_ORIGIN), 302);
  });

  routes.post("/api/auth/logout", sameOriginOnly, async (c) => {
    const { deps, oidc, sessions } = c.var;
    const refresh = await sessions.refreshOf(cookiesOf(c));
    for (const cookie of sessions.clear()) c.header("Set-Cookie", cookie, { append: true });
    c.header("Cache-Control", "no-store");
    if (refresh?.rt) {
      // The cookies are gone either way; an issuer that cannot revoke now is told in the log.
      await oidc.revoke(refresh.rt).catch((err: unknown) => deps.logger.warn("refresh token revocation failed", { requestId: c.var.requestId, err: err instanceof Error ? err.message : String(err) }));
    }
    const endSession = await oidc.endSessionUrl(refresh?.idt).catch(() => undefined);
    return c.redirect(endSession?.href ?? "/", 303);
  });

  return routes;
}

async function unreachableAs503<T>(requestId: string, logger: import("../../platform/logger").Logger, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof IssuerUnreachable)) throw err;
    logger.error("identity provider unavailable", { requestId, reason: err.message });
    throw new ApiError("service_unavailable", "the identity provider cannot be reached; retry shortly");
  }
}
