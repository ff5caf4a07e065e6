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
