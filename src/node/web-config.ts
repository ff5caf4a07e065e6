import type { Config } from "../config";
import { ConfigError } from "../config";
import { parseWebConfig, type WebConfig } from "../web/config";
import { listeningUrl } from "./server";

/**
 * The web app's config on Node, beside the API's. It is served when its identity settings are
 * there (OIDC_ISSUER and OIDC_CLIENT_ID); outside production WEB_ORIGIN defaults to its loopback
 * address and API_URL to this process's API. Returns undefined (with the reason) when it is off.
 */
export function nodeWebConfig(env: Record<string, string | undefined>, api: Config): { config: WebConfig; apiUrl: string } | { off: string } {
  const blank = (name: string) => (env[name] ?? "").trim() === "";
  if ((env.WEB_PORT ?? "").trim() === "0") return { off: "WEB_PORT is 0" };
  if (blank("OIDC_ISSUER") || blank("OIDC_CLIENT_ID")) return { off: "OIDC_ISSUER and OIDC_CLIENT_ID are not both set (the web app signs members in there)" };
  const production = api.NODE_ENV === "production";
  const port = blank("WEB_PORT") ? 8788 : Number(env.WEB_PORT);
  const defaults: Record<string, string> = production ? {} : { WEB_ORIGIN: listeningUrl(api.HOST === "0.0.0.0" ? "127.0.0.1" : api.HOST, port) };
  const config = parseWebConfig({ ...defaults, ...Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== "")) });
  const apiUrl = config.API_URL ?? (production ? undefined : listeningUrl(api.HOST === "0.0.0.0" ? "127.0.0.1" : api.HOST, api.PORT));
  if (!apiUrl) throw new ConfigError([{ variable: "API_URL", message: "is required in production when the web app is served" }]);
  return { config, apiUrl };
}
