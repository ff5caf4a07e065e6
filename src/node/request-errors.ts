import { RequestError } from "@hono/node-server";
import type { AppDeps } from "../deps";
import { errorResponse } from "../http/error-handler";
import { logAccess, requestIdFor } from "../http/middleware";

/**
 * The answer to a request the Node adapter could not turn into a Request at all (a Host header
 * that is not a host, a backslash in the path, an absolute URL that does not parse): 400 in
 * shape 1 with a request id and an access line, where the adapter alone would send an empty
 * 400. Anything else thrown out of the app's fetch (which its own error handler should have
 * caught) is a 500 that says only "internal error".
 */
export function answerAdapterError(deps: AppDeps): (err: unknown) => Response {
  return (err) => {
    const started = deps.clock.now();
    const requestId = requestIdFor(deps, undefined);
    if (err instanceof RequestError) {
      logAccess(deps, { requestId, method: "-", route: "-", path: "-", status: 400, started });
      return errorResponse({ requestId, path: "" }, { code: "invalid_input", status: 400, message: `malformed request: ${err.message}`, headers: {} });
    }
    deps.logger.error("request failed outside the app", { requestId, error: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err) });
    return errorResponse({ requestId, path: "" }, { code: "internal_error", status: 500, message: "internal error", headers: {} });
  };
}
