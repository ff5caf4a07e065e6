import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { createWebApp } from "../web/app";
import type { WebConfig } from "../web/config";
import type { WebDeps } from "../web/deps";
import { systemClock } from "../platform/clock";
import { createIdGenerator, webRandom } from "../platform/ids";
import type { Logger } from "../platform/logger";
import { listeningUrl } from "./server";
import type { Config } from "../config";
import { configuredSecrets } from "../platform/logger";
import { createWebLogger } from "../web/logger";
import { startDevSignIn } from "./dev-sign-in";

/** The web app's deps on Node: the API over HTTP at API_URL. */
export function buildWebDeps(config: WebConfig, logger: Logger, apiUrl: string): WebDeps {
  const fetch = globalThis.fetch.bind(globalThis);
  return {
    config,
    clock: systemClock,
    ids: createIdGenerator(systemClock, webRandom),
    logger,
    fetch,
    api: (path, init) => fetch(`${apiUrl}${path}`, init),
  };
}

/** Serves the web app on its own port; resolves with the address it listens at. */
export async function runWebServer(config: WebConfig, deps: { logger: Logger; apiUrl: string; host: string }): Promise<{ url: string; close(): Promise<void> }> {
  const app = await createWebApp(buildWebDeps(config, deps.logger, deps.apiUrl));
  const server = createServer(getRequestListener((req) => app.fetch(req)));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.WEB_PORT, deps.host, () => resolve());
  });
  const info = server.address() as AddressInfo;
  const url = listeningUrl(info.address, info.port);
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

/**
 * What both Node entries do once the web app's config is valid: its logger (which also redacts the
 * API's secrets), the development issuer when no identity provider is configured, and the server.
 */
export async function startWebApp(api: Config, web: { config: WebConfig; apiUrl: string; devSignIn: boolean }): Promise<{ url: string; close(): Promise<void> }> {
  const logger = createWebLogger(web.config, { extraSecrets: configuredSecrets(api) });
  if (web.devSignIn) {
    const signIn = await startDevSignIn(api, web.config.WEB_ORIGIN);
    logger.warn("no identity provider configured: the web app signs members in at the development issuer (any name, no password)", { issuer: signIn.issuer });
  }
  const served = await runWebServer(web.config, { logger, apiUrl: web.apiUrl, host: api.HOST });
  logger.info("web app listening", { url: served.url, origin: web.config.WEB_ORIGIN, api: web.apiUrl });
  return served;
}
