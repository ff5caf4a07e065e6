import { configuredSecrets, createJsonLogger, type Logger, type LoggerOptions } from "../platform/logger";
import type { WebConfig } from "./config";

/**
 * The web app's logger, built the same way by every entry: besides the credential shapes every
 * logger knows (tokens, and the session, refresh and sign-in cookies by name), the values of
 * WEB_COOKIE_SECRET and OIDC_CLIENT_SECRET are redacted wherever they appear. `extraSecrets`
 * takes the API's configured credentials when both apps share one process.
 */
export function createWebLogger(config: WebConfig, options: Omit<LoggerOptions, "level" | "secrets"> & { extraSecrets?: readonly string[] } = {}): Logger {
  const { extraSecrets = [], ...rest } = options;
  return createJsonLogger({ ...rest, level: config.LOG_LEVEL, secrets: [...configuredSecrets(config), ...extraSecrets] });
}
