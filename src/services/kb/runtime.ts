import type { Clock } from "../../platform/clock";
import { createMemoryBlobStore, type BlobStore } from "./blob-store";
import { createKbCache, type KbCache } from "./snapshot";
import { createDohResolver, type HostResolver } from "./url-fetch";
import { createEmbeddingState, type EmbeddingState } from "./vectors";

/**
 * What the knowledge base keeps per app instance: the snapshot cache, the section and question
 * embeddings' state, and the asset ports (from deps, or per-instance defaults). createApp builds
 * one and keeps it in the app's runtime, so two apps in one process never share any of it.
 */
export interface KbRuntime {
  cache: KbCache;
  embeddings: EmbeddingState;
  blobs: BlobStore;
  resolver: HostResolver;
}

export function createKbRuntime(deps: { clock: Clock; fetch: typeof fetch; blobs?: BlobStore; resolver?: HostResolver }): KbRuntime {
  return {
    cache: createKbCache(deps.clock),
    embeddings: createEmbeddingState(),
    blobs: deps.blobs ?? createMemoryBlobStore(),
    resolver: deps.resolver ?? createDohResolver(deps.fetch),
  };
}
