import type { Config } from "../config";
import { ConfigError } from "../config";
import { parseWebConfig, type WebConfig } from "../web/config";
import { listeningUrl } from "./server";
import { DEV_WEB_CLIENT_ID, devSignInIssuer } from "./dev-sign-in";

function randomCookieSecret(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The web app's config on Node, beside the API's. It is served when its identity settings are
 * there (OIDC_ISSUER and OIDC_CLIENT_ID), or outside production when no identity provider is
 * configured at all (then at the development sign-in); outside production WEB_ORIGIN defaults to
 * its loopback address and API_URL to this process's API. Returns the reason when it is off.
 */
export function nodeWebConfig(env: Record<string, string | undefined>, api: Config): { config: WebConfig; apiUrl: string; devSignIn: boolean } | { off: string } {
  const blank = (name: string) => (env[name] ?? "").trim() === "";
  if ((env.WEB_PORT ?? "").trim() === "0") return { off: "WEB_PORT is 0" };
  const production = api.NODE_ENV === "production";
  // With no identity provider at all, outside production, members sign in at the development
  // issuer (dev-sign-in.ts) with a cookie key made for this run.
  const devSignIn = !production && blank("OIDC_ISSUER") && blank("OIDC_CLIENT_ID") && !api.OIDC_ISSUER;
  if (!devSignIn && (blank("OIDC_ISSUER") || blank("OIDC_CLIENT_ID"))) return { off: "OIDC_ISSUER and OIDC_CLIENT_ID are not both set (the web app signs members in there)" };
  const port = blank("WEB_PORT") ? 8788 : Number(env.WEB_PORT);
  const defaults: Record<string, string> = production ? {} : { WEB_ORIGIN: listeningUrl(api.HOST === "0.0.0.0" ? "127.0.0.1" : api.HOST, port) };
  if (devSignIn) Object.assign(defaults, { OIDC_ISSUER: devSignInIssuer(api), OIDC_CLIENT_ID: DEV_WEB_CLIENT_ID, WEB_COOKIE_SECRET: randomCookieSecret() });
  const config = parseWebConfig({ ...defaults, ...Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== "")) });
  const apiUrl = config.API_URL ?? (production ? undefined : listeningUrl(api.HOST === "0.0.0.0" ? "127.0.0.1" : api.HOST, api.PORT));
  if (!apiUrl) throw new ConfigError([{ variable: "API_URL", message: "is required in production when the web app is served" }]);
  return { config, apiUrl, devSignIn };
}
