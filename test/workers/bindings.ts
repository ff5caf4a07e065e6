import { inject } from "vitest";
import type { WorkerEnv } from "../../workers/api";

/**
 * What production binds on Workers, pointed at the global setup's loopback parties: the test
 * issuer for tokens and Upstash's REST protocol in front of the local Redis, under a key prefix of
 * the test file's own (`name`, made unique per run). `env` is the runtime's own bindings
 * (`cloudflare:workers`), passed in since the project-wide type check does not know that module.
 */
export function workerBindings(env: object, name: string, extra: Record<string, unknown> = {}): WorkerEnv {
  return {
    ...env,
    OIDC_ISSUER: inject("issuerUrl"),
    OIDC_AUDIENCE: inject("issuerAudience"),
    UPSTASH_REDIS_REST_URL: inject("upstashUrl"),
    UPSTASH_REDIS_REST_TOKEN: inject("upstashToken"),
    KV_PREFIX: `workers-${name}-${crypto.randomUUID()}:`,
    ...extra,
  };
}
