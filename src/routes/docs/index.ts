import { Scalar } from "@scalar/hono-api-reference";
import type { MiddlewareHandler } from "hono";
import { NONCE, secureHeaders } from "hono/secure-headers";
import vendored from "../../../vendor/scalar-api-reference/manifest.json";
import { createRouter } from "../../http/router";
import type { AppEnv } from "../../http/env";

export const DOCS_PATH = "/docs";
/** Versioned, so browsers and caches may keep it for good. */
export const REFERENCE_SCRIPT_PATH = `/docs/assets/scalar-api-reference-${vendored.version}.js`;

/**
 * The page loads only what this origin serves: its script from REFERENCE_SCRIPT_PATH and the
 * document from /openapi.json. The middleware's init script is inline, so scripts need this
 * request's nonce; the reference injects its styles at run time, hence inline styles.
 */
const pageHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    scriptSrc: ["'self'", NONCE],
    styleSrc: ["'self'", "'unsafe-inline'"],
    imgSrc: ["'self'", "data:"],
    fontSrc: ["'self'", "data:"],
    connectSrc: ["'self'"],
    baseUri: ["'none'"],
    formAction: ["'none'"],
    frameAncestors: ["'none'"],
  },
});

function referencePage(openApiPath: string): MiddlewareHandler<AppEnv> {
  const render = Scalar<AppEnv>({
    url: openApiPath,
    cdn: REFERENCE_SCRIPT_PATH,
    pageTitle: "Dating and Social Platform API reference",
    // No fonts from Scalar's font host, no usage reports, no hosted AI chat.
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    showDeveloperTools: "never",
  });
  return async (c, next) => {
    const page = await render(c, next);
    const html = page instanceof Response ? await page.text() : "";
    const nonce = c.get("secureHeadersNonce") ?? "";
    return c.html(html.replaceAll("<script", `<script nonce="${nonce}"`));
  };
}

/**
 * The browsable API reference: Scalar's page over our OpenAPI document. Public, like the
 * document itself. `script` gives the vendored browser build's text (read from disk on Node,
 * bundled into the Worker).
 */
export function docsRoutes(openApiPath: string, script: () => Promise<string>) {
  return createRouter()
    .get(DOCS_PATH, pageHeaders, referencePage(openApiPath))
    .get(REFERENCE_SCRIPT_PATH, async (c) => {
      const body = await script();
      return c.body(body, 200, {
        "Content-Type": "text/javascript; charset=utf-8",
        "Cache-Control": "public, max-age=31536000, immutable",
        "X-Content-Type-Options": "nosniff",
      });
    });
}
