import type { Context } from "hono";
import type { AppEnv } from "../../http/env";
import type { AssetContext } from "../../services/kb/assets";
import type { KbContext } from "../../services/kb/document";

/** What the KB document services need from a request: its database session and the instance's cache. */
export function kbContext(c: Context<AppEnv>): KbContext {
  return { db: c.var.db, cache: c.var.runtime.kb.cache };
}

/** What the asset services need from a request: the instance's KB state and the deps' outbound ports. */
export function assetContext(c: Context<AppEnv>): AssetContext {
  const deps = c.var.deps;
  const kb = c.var.runtime.kb;
  return {
    db: c.var.db,
    ids: deps.ids,
    blobs: kb.blobs,
    cache: kb.cache,
    fetch: deps.assetFetch ?? deps.fetch,
    resolver: kb.resolver,
    allowedHosts: deps.assetFetchAllowedHosts,
  };
}
