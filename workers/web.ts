import type { ExecutionContext } from "hono";
import { ConfigError } from "../src/config";
import { ApiError } from "../src/errors";
import { errorResponse } from "../src/http/error-handler";
import { requestIdFor } from "../src/http/middleware";
import { systemClock } from "../src/platform/clock";
import { createIdGenerator, webRandom } from "../src/platform/ids";
import { createJsonLogger, type LogLevel } from "../src/platform/logger";
import { createWebLogger } from "../src/web/logger";
import { createWebApp, type WebApp } from "../src/web/app";
import { parseWebConfig } from "../src/web/config";
import type { WebDeps } from "../src/web/deps";

/**
 * The web app's Worker (wrangler.web.toml): it builds the web app's deps from its bindings and
 * reaches the API through the `API` service binding, never over the public internet.
 */
export interface WebWorkerEnv {
  [binding: string]: unknown;
  API?: { fetch(request: Request): Promise<Response> };
}

type State = { ready: true; app: WebApp } | { ready: false; detail: string; variables: string[] };

const ids = createIdGenerator(systemClock, webRandom);
/** The host name the API binding is called at; a service binding ignores it. */
const API_BINDING_ORIGIN = "https://api.internal";

export function createWebWorker() {
  let state: Promise<State> | undefined;
  return {
    async fetch(request: Request, env: WebWorkerEnv, ctx: ExecutionContext): Promise<Response> {
      state ??= build(env).catch((err: unknown) => {
        if (err instanceof ConfigError) return { ready: false as const, detail: err.message, variables: err.variables };
        state = undefined;
        throw err;
      });
      let current: State;
      try {
        current = await state;
      } catch (err) {
        return unavailable(request, env, "web worker failed to start", err);
      }
      if (!current.ready) return unavailable(request, env, "invalid configuration", current.detail);
      return current.app.fetch(request, env, ctx);
    },
  };
}

export default createWebWorker();

async function build(env: WebWorkerEnv): Promise<State> {
  const bindings = typeof env.NODE_ENV === "string" && env.NODE_ENV.trim() !== "" ? env : { ...env, NODE_ENV: "production" };
  const config = parseWebConfig(bindings);
  const api = env.API;
  if (!api || typeof api.fetch !== "function") throw new ConfigError([{ variable: "API", message: "must be a service binding to the API Worker (wrangler.web.toml [[services]])" }]);
  const fetch = globalThis.fetch.bind(globalThis);
  const deps: WebDeps = {
    config,
    clock: systemClock,
    ids,
    logger: createWebLogger(config),
    fetch,
    api: (path, init) => api.fetch(new Request(`${API_BINDING_ORIGIN}${path}`, init)),
  };
  return { ready: true, app: await createWebApp(deps) };
}

const LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error", "silent"];

function unavailable(request: Request, env: WebWorkerEnv, msg: string, detail: unknown): Response {
  const requestId = requestIdFor({ ids }, request.headers.get("x-request-id"));
  const level = LEVELS.find((l) => l === env.LOG_LEVEL) ?? "info";
  createJsonLogger({ level }).error(msg, { requestId, error: detail instanceof Error ? detail.message : detail });
  return errorResponse({ requestId, path: new URL(request.url).pathname }, new ApiError("service_unavailable"));
}
