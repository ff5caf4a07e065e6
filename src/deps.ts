import type { TokenVerifier } from "./auth/tokens";
import type { Config } from "./config";
import type { Database } from "./db/port";
import type { KeyValueStore } from "./kv/port";
import type { Clock } from "./platform/clock";
import type { IdGenerator, Random } from "./platform/ids";
import type { Logger } from "./platform/logger";
import type { TierLookup } from "./services/tiers/port";
import type { BlobStore } from "./services/kb/blob-store";
import type { HostResolver } from "./services/kb/url-fetch";
import type { InferenceClient } from "./services/inference/types";
import type { BackgroundWork } from "./platform/background";
import type { OutboxDispatch } from "./services/outbox/dispatch";

/** Everything the app needs from the outside world; each entry builds these and nothing else. */
export interface AppDeps {
  config: Config;
  database: Database;
  kv: KeyValueStore;
  clock: Clock;
  random: Random;
  ids: IdGenerator;
  logger: Logger;
  /** Outbound HTTP; tests point it at loopback fakes, never at a stub inside our code. */
  fetch: typeof fetch;
  /** Verifies access tokens: the OIDC issuer, or the development issuer on a local Node server. */
  tokenVerifier: TokenVerifier;
  /**
   * The text of the API reference page's script (vendor/scalar-api-reference): read from disk on
   * Node, bundled into the Worker.
   */
  apiReferenceScript: () => Promise<string>;
  /**
   * The caller's network address in one spelling (src/http/client-address.ts): Cloudflare's
   * CF-Connecting-IP on Workers; on Node the socket's peer, or behind TRUSTED_PROXY_HOPS reverse
   * proxies the X-Forwarded-For entry the outermost one wrote. Every per-address rule reads it
   * here; none reads those headers itself. Absent, or null for a request: no address known, and
   * per-address limits do not apply.
   */
  clientAddress?: (request: Request, env: unknown) => string | null;
  /** Plan tier per user for rate limits; defaults to reading subscriptions. */
  tierLookup?: TierLookup;
  /** Bytes of knowledge-base assets; defaults to an in-process store (single instance only). */
  blobs?: BlobStore;
  /** Name resolution for fetching asset URLs; defaults to DNS over HTTPS through `fetch`. */
  resolver?: HostResolver;
  /**
   * Host names an asset URL may point at although they resolve to a private address. Tests only
   * (a loopback fake server under a made-up name); the entries never set it.
   */
  assetFetchAllowedHosts?: readonly string[];
  /**
   * Outbound HTTP for asset URLs, when it should differ from `fetch`: the Node entry's fetch checks
   * the address each connection is made to (src/node/public-lookup.ts), so a name that changes its
   * answer between our check and the connection (DNS rebinding) is refused.
   */
  assetFetch?: typeof fetch;
  /**
   * Outbound HTTP for partner webhook deliveries, when it should differ from `fetch`: the Node
   * entry's checks the address each connection is made to, as for asset URLs.
   */
  webhookFetch?: typeof fetch;
  /** Host names a webhook URL may point at although they resolve to a private address. Tests only. */
  webhookAllowedHosts?: readonly string[];
  /**
   * Told the ids of new outbox messages once their transaction commits (Workers: a Queue producer).
   * Absent on Node, whose delivery loop finds due rows by itself.
   */
  outboxDispatch?: OutboxDispatch;
  /** The self-hosted inference hosts; built from INFERENCE_* config over deps.fetch when absent. */
  inference?: InferenceClient;
  /**
   * Aborted when the process is stopping (the Node entry, on SIGTERM or SIGINT). Open event
   * streams never end on their own, so the app ends them then, and the server's close() can
   * complete instead of waiting for clients that never hang up.
   */
  stopping?: AbortSignal;
  /**
   * Where a process keeps count of the background work it started (translation jobs), so that
   * stopping waits for it; the Node entry builds one. Workers keep such work alive through
   * waitUntil instead.
   */
  background?: BackgroundWork;
}
