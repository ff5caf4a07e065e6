import type { Principal } from "../auth/principal";
import type { AppDeps } from "../deps";
import type { Db } from "../db/port";
import type { EventStreams } from "../services/matching/event-streams";
import type { LastUsedRecorder } from "../services/api-keys/keys";
import type { IdempotencyHandle } from "../services/idempotency/keys";
import type { CachedTierLookup, TierLookup } from "../services/tiers/port";
import type { UserCache } from "../services/users/ensure-user";
import type { AccountStates } from "../services/account/states";
import type { HostHealth, InferenceClient } from "../services/inference/types";
import type { PendingContextRead } from "../services/ai/context-cache";
import type { KbRuntime } from "../services/kb/runtime";


/** State an app instance keeps across requests (caches, counters); built once by createApp. */
export interface Runtime {
  users: UserCache;
  /** Deletions and restores made here, ahead of the identity cache (services/account/states.ts). */
  accounts: AccountStates;
  lastUsed: LastUsedRecorder;
  /** Cached briefly: the rate limiter asks on every request. */
  tiers: CachedTierLookup;
  /** Uncached, for answers that must be current (the wallet overview). */
  tierSource: TierLookup;
  metrics: { rateLimitFailOpen: number };
  /** The live match event streams, with the delivery this runtime can run (see createApp). */
  events: EventStreams;
  /** The inference port (failover and host cooldowns live in it, per app instance). */
  inference: InferenceClient;
  /** The last probe of the inference hosts, shared by /ai-agents/health callers for a few seconds. */
  aiHealth?: { at: number; report: Promise<HostHealth[]> };
  /** The knowledge base's snapshot cache, embeddings and asset ports. */
  kb: KbRuntime;
  /** Learnt on the first deferred task: Workers have an execution context, Node does not. */
  hasExecutionContext?: boolean;
}

export interface AppVariables {
  deps: AppDeps;
  runtime: Runtime;
  requestId: string;
  /** True once an error answer was built with the X-Request-Id header in it. */
  requestIdOnResponse?: boolean;
  db: Db;
  /**
   * Work started during the request that goes on using its database session after the answer (a
   * cache refresh, a last-used stamp): the session is released once it has settled.
   */
  sessionWork?: Promise<unknown>[];
  principal?: Principal;
  /** Set once the caller is known; the access log reads it. */
  userId?: string;
  /**
   * Headers every answer to this request carries, an error answer built afresh included: the
   * counted request's X-RateLimit-*, an old API key's Warning.
   */
  answerHeaders?: Record<string, string>;
  /** Present when the request carries an Idempotency-Key the caller now holds. */
  idempotency?: IdempotencyHandle;
  /** The caller's AI context, read while the rate limiter decides (AI routes that use it). */
  contextRead?: PendingContextRead;
  /**
   * Set when the authentication and rate-limit layer refused the request (401, 429, 503 when the
   * identity provider cannot be reached, or its own failure): that layer answers in shape 1 on
   * every route, AI routes included.
   */
  refusedBy?: "access";
  /** The route answers a deleted account too (only its restore): set by authenticateDeletedToo. */
  deletedToo?: boolean;
  /** The language an AI route answers in; shape 2 errors echo it. */
  language?: string;
  /**
   * Settles when a streamed answer has finished (or was abandoned); the AI concurrency slot is
   * held until then rather than until the handler returned the headers.
   */
  responseDone?: Promise<unknown>;
}

export interface AppEnv {
  Variables: AppVariables;
}
