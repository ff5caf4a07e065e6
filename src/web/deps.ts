import type { Clock } from "../platform/clock";
import type { IdGenerator } from "../platform/ids";
import type { Logger } from "../platform/logger";
import type { WebConfig } from "./config";

/** Everything the web app needs from outside; its entries build these and nothing else. */
export interface WebDeps {
  config: WebConfig;
  clock: Clock;
  ids: IdGenerator;
  logger: Logger;
  /** Outbound HTTP to the identity provider and the platform agent. */
  fetch: typeof fetch;
  /**
   * Reaches the API with a path (`/api/v1/…`): the API service binding on Workers, API_URL over
   * HTTP on Node. The API is never called at an address a request chose.
   */
  api(path: string, init: RequestInit): Promise<Response>;
}
