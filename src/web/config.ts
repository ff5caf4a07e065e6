import { z } from "zod";
import { ConfigError, type ConfigIssue } from "../config";
import { parseUrl } from "../platform/url";

/**
 * The web app's environment (`createWebApp`), parsed once at its entry like the API's. Blank
 * values count as unset.
 */
const blankToUndefined = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);
const optional = <T extends z.ZodType>(schema: T) => z.preprocess(blankToUndefined, schema.optional());
const withDefault = <T extends z.ZodType>(schema: T, fallback: z.input<T>) => z.preprocess(blankToUndefined, schema.default(fallback as never));
const httpUrl = z.string().refine((v) => ["http:", "https:"].includes(parseUrl(v)?.protocol ?? ""), "must be a http(s) URL");
/** An origin: scheme, host and port, nothing after. */
const origin = httpUrl.transform((v, ctx) => {
  const url = new URL(v);
  if ((url.pathname !== "/" && url.pathname !== "") || url.search || url.hash || url.username) {
    ctx.addIssue({ code: "custom", message: "must be an origin (scheme://host[:port]) without a path" });
    return z.NEVER;
  }
  return url.origin;
});

export const webConfigSchema = z.object({
  NODE_ENV: withDefault(z.enum(["development", "test", "production"]), "development"),
  LOG_LEVEL: withDefault(z.enum(["debug", "info", "warn", "error", "silent"]), "info"),
  /** Where browsers reach the web app; the OIDC redirect URI and the same-origin checks derive from it. */
  WEB_ORIGIN: origin,
  /** Node only: the web app's port (the API keeps PORT); 0 leaves the web app off. */
  WEB_PORT: withDefault(z.coerce.number().int().min(0).max(65535), 8788),
  /** Keys of the encrypted cookies (derived per cookie with HKDF); changing it signs everyone out. */
  WEB_COOKIE_SECRET: z.string().min(32, "must be at least 32 characters"),
  /** How long a sign-in lasts without activity: the refresh cookie's lifetime. */
  WEB_SESSION_MAX_AGE_SECONDS: withDefault(z.coerce.number().int().min(300).max(400 * 86_400), 30 * 86_400),
  OIDC_ISSUER: httpUrl,
  OIDC_CLIENT_ID: z.string().min(1),
  /** Confidential clients only; a public client (PKCE alone) leaves it unset. */
  OIDC_CLIENT_SECRET: optional(z.string().min(1)),
  OIDC_SCOPES: withDefault(z.string(), "openid email"),
  /** Node only: the API the web app forwards to (Workers reach it through the API service binding). */
  API_URL: optional(httpUrl.transform((v) => v.replace(/\/+$/, ""))),
  PLATFORM_AGENT_URL: optional(httpUrl),
  PLATFORM_AGENT_TIMEOUT_MS: withDefault(z.coerce.number().int().min(100).max(600_000), 30_000),
});

export type WebConfig = z.output<typeof webConfigSchema>;

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

export function isLoopbackHttp(url: string): boolean {
  const parsed = parseUrl(url);
  return parsed?.protocol === "http:" && LOOPBACK.has(parsed.hostname);
}

function crossFieldIssues(config: WebConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  // Cookies and tokens over plain http are readable on the path; loopback is the one exception.
  if (!config.WEB_ORIGIN.startsWith("https:") && !isLoopbackHttp(config.WEB_ORIGIN)) {
    issues.push({ variable: "WEB_ORIGIN", message: "must be https (http only for a loopback address)" });
  }
  if (config.NODE_ENV === "production" && !config.OIDC_ISSUER.startsWith("https:") && !isLoopbackHttp(config.OIDC_ISSUER)) {
    issues.push({ variable: "OIDC_ISSUER", message: "must be an https URL in production (http only for a loopback address)" });
  }
  if (!config.OIDC_SCOPES.split(/\s+/).includes("openid")) issues.push({ variable: "OIDC_SCOPES", message: "must include openid" });
  return issues;
}

/** Parses the web app's environment; throws a ConfigError naming every bad variable. */
export function parseWebConfig(env: Record<string, unknown>): WebConfig {
  const result = webConfigSchema.safeParse(env);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((issue) => ({ variable: String(issue.path[0] ?? "environment"), message: issue.message === "Invalid input: expected string, received undefined" ? "is required" : issue.message })));
  }
  const issues = crossFieldIssues(result.data);
  if (issues.length > 0) throw new ConfigError(issues);
  return result.data;
}
