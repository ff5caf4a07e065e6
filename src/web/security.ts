import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors";
import type { WebEnv } from "./env";

/**
 * A state-changing request must come from a page of the web app itself. `Sec-Fetch-Site` is what
 * browsers send today; `Origin` covers older ones. A request with neither (not a browser) is
 * refused too: the web routes exist for browsers, native clients call the API with their bearer.
 */
export const sameOriginOnly: MiddlewareHandler<WebEnv> = async (c, next) => {
  if (c.req.method === "GET" || c.req.method === "HEAD" || c.req.method === "OPTIONS") return next();
  const site = c.req.header("sec-fetch-site");
  const origin = c.req.header("origin");
  // Sec-Fetch-Site is set by the browser alone (no page script can change it), so where it is
  // present it decides; a form's Origin may read "null" under some referrer policies.
  const allowed = site !== undefined ? site === "same-origin" : origin === c.var.deps.config.WEB_ORIGIN;
  if (!allowed) {
    c.var.deps.logger.info("cross-site request refused", { requestId: c.var.requestId, path: c.req.path, site, origin });
    throw new ApiError("forbidden", "cross-site requests are refused");
  }
  await next();
};

/** A fresh nonce for the page's inline script and style. */
export function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes)).replace(/[+/=]/g, (ch) => ({ "+": "-", "/": "_", "=": "" })[ch] ?? "");
}

/** Headers every answer of the web app carries; the CSP is the page's (JSON answers need none of it but lose nothing). */
export const securityHeaders: MiddlewareHandler<WebEnv> = async (c, next) => {
  const nonce = newNonce();
  c.set("nonce", nonce);
  await next();
  const { config } = c.var.deps;
  const formTargets = ["'self'", ...c.var.oidc.issuerOrigins()].join(" ");
  c.header(
    "Content-Security-Policy",
    `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src 'self' data:; connect-src 'self'; form-action ${formTargets}; frame-ancestors 'none'; base-uri 'none'`,
  );
  if (config.WEB_ORIGIN.startsWith("https:")) c.header("Strict-Transport-Security", "max-age=63072000; includeSubDomains");
  c.header("X-Content-Type-Options", "nosniff");
  // Nothing of our URLs leaves the origin; same-origin requests keep theirs (and their Origin).
  c.header("Referrer-Policy", "same-origin");
  c.header("X-Frame-Options", "DENY");
  c.header("Cross-Origin-Opener-Policy", "same-origin");
  c.header("Permissions-Policy", "camera=(), microphone=(), geolocation=()");
};
