import type { Context } from "hono";
import type { AppDeps } from "../../deps";
import type { AppEnv } from "../../http/env";
import type { AssetContext } from "./assets";
import { createMemoryBlobStore, type BlobStore } from "./blob-store";
import { kbCacheFor, type KbCache } from "./snapshot";
import { createDohResolver, type HostResolver } from "./url-fetch";

interface KbPorts {
  blobs: BlobStore;
  resolver: HostResolver;
}

const defaults = new WeakMap<AppDeps, KbPorts>();

/** The blob store and resolver of one app instance: from deps, or per-instance defaults. */
function portsOf(deps: AppDeps): KbPorts {
  let ports = defaults.get(deps);
  if (!ports) {
    ports = { blobs: deps.blobs ?? createMemoryBlobStore(), resolver: deps.resolver ?? createDohResolver(deps.fetch) };
    defaults.set(deps, ports);
  }
  return ports;
}

export function kbCache(deps: AppDeps): KbCache {
  return kbCacheFor(deps, deps.clock);
}

export function assetContext(c: Context<AppEnv>): AssetContext {
  const deps = c.var.deps;
  const ports = portsOf(deps);
  return {
    db: c.var.db,
    ids: deps.ids,
    blobs: ports.blobs,
    cache: kbCache(deps),
    fetch: deps.assetFetch ?? deps.fetch,
    resolver: ports.resolver,
    allowedHosts: deps.assetFetchAllowedHosts,
    requestId: c.var.requestId,
    now: deps.clock.now(),
  };
}
