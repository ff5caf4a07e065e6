/// <reference path="./modules.d.ts" />
import type { ExecutionContext } from "hono";
import { createApp, type App } from "../src/app";
import { TokenRejected, createOidcVerifier, type TokenVerifier } from "../src/auth/tokens";
import { checkConfig, ConfigError, type Config, type ConfigIssue } from "../src/config";
import { createNeonDatabase } from "../src/db/neon";
import type { AppDeps } from "../src/deps";
import { ApiError } from "../src/errors";
import { errorResponse } from "../src/http/error-handler";
import { requestIdFor } from "../src/http/middleware";
import { canonicalAddress } from "../src/http/client-address";
import { createMemoryStore } from "../src/kv/memory";
import type { KeyValueStore } from "../src/kv/port";
import { createUpstashStore } from "../src/kv/upstash";
import { systemClock } from "../src/platform/clock";
import { createIdGenerator, webRandom } from "../src/platform/ids";
import { configuredSecrets, createJsonLogger, type LogLevel, type Logger } from "../src/platform/logger";
import { paymentDepsOf } from "../src/services/payments/context";
import { reconcilePayments } from "../src/services/payments/reconcile";
import { createR2BlobStore, type R2BucketLike } from "../src/services/kb/blob-store";
import { inferenceFromConfig } from "../src/services/inference/from-config";
import { runTranslationJobs } from "../src/services/translations/seeding";
import { queueDispatch, type OutboxQueue } from "../src/services/outbox/dispatch";
import { outboxWorkerDeps } from "../src/services/outbox/loop";
import { consumeOutboxBatch, deliverDueWithin, type OutboxQueueBatch } from "../src/services/outbox/queue-consumer";
import { runWorkflowSchedule } from "../src/services/workflows/run-schedule";
import { runAccountExports } from "../src/services/account/export-runner";
import { RETENTION_TASKS } from "../src/services/upkeep/retention";
// The API reference page's script as text (wrangler.toml [[rules]]), served by the app.
import apiReferenceScript from "../vendor/scalar-api-reference/standalone.js?raw";

/** Vars and secrets from wrangler.toml / `wrangler secret put`; all plain strings on Workers. */
export interface WorkerEnv {
  [binding: string]: unknown;
  DATABASE_URL?: string;
  /** Local and test use only: host:port of a WebSocket-to-TCP proxy in front of a plain Postgres. */
  NEON_WS_PROXY?: string;
  /** Local and test use only: "true" for ws:// to that proxy. */
  NEON_INSECURE_WS?: string;
  /** R2 bucket for knowledge-base asset bytes. */
  KB_ASSETS?: R2BucketLike;
  /** The outbox's queue (wrangler.toml): new messages' ids go to it, and this Worker consumes it. */
  OUTBOX_QUEUE?: OutboxQueue;
  /**
   * Local and test use only: comma-separated host names a webhook URL may point at although they
   * are loopback or private (a partner endpoint faked on this machine). Refused in production.
   */
  WEBHOOK_ALLOWED_HOSTS?: string;
}

export interface WorkerHandler {
  fetch(request: Request, env: WorkerEnv, ctx: ExecutionContext): Promise<Response>;
  /**
   * The cron trigger (wrangler.toml `[triggers] crons`, every five minutes): payment reconciliation,
   * translation jobs, workflow runs, account exports and unsent outbox messages on every run; the
   * retention tasks on the first run of each hour.
   */
  scheduled(controller: { scheduledTime?: number; cron?: string }, env: WorkerEnv, ctx: ExecutionContext): Promise<void>;
  /** The outbox queue's consumer (wrangler.toml `[[queues.consumers]]`): delivers the messages named. */
  queue(batch: OutboxQueueBatch, env: WorkerEnv, ctx: ExecutionContext): Promise<void>;
}

type State = { ready: true; app: App; deps: AppDeps } | { ready: false; variables: string[]; detail: string };

const ids = createIdGenerator(systemClock, webRandom);
/** A cron run's share of translation work; the next run (five minutes on) goes on with the rest. */
const CRON_TRANSLATION_BUDGET_MS = 120_000;
/** A cron run's share of export building; the next run goes on with the rest. */
const CRON_EXPORT_BUDGET_MS = 60_000;
/** A cron run's share of outbox deliveries nobody sent; the next run goes on with the rest. */
const CRON_OUTBOX_BUDGET_MS = 120_000;
/** The cron's period (wrangler.toml): the run scheduled within this of the hour is the hourly one. */
const CRON_PERIOD_MS = 5 * 60_000;

/**
 * Whether a cron run is the hour's first, which runs the retention tasks: hourly, as on Node (a
 * retention's bound is in days, and an erasure's promise is "within the hour"). A run without a
 * scheduled time (invoked by hand) runs them.
 */
function isHourlyRun(scheduledTime: number | undefined): boolean {
  return scheduledTime === undefined || scheduledTime % 3_600_000 < CRON_PERIOD_MS;
}

/**
 * A handler with its own per-isolate cache. The default export is one of these; tests make
 * their own to try other environments without touching the cached app.
 */
export function createWorker(): WorkerHandler {
  let state: State | undefined;

  return {
    async fetch(request, env, ctx) {
      // What goes wrong here is told to the log, with the request id; the caller, who may be
      // anyone, learns only that the service is unavailable and the id to quote.
      if (state === undefined) {
        try {
          // Bindings do not change during an isolate's life, so neither does the outcome.
          state = buildState(env);
        } catch (err) {
          if (!(err instanceof ConfigError)) {
            // Not a configuration problem (nothing is cached): the next request tries again.
            const requestId = requestIdFor({ ids }, request.headers.get("x-request-id"));
            bootLogger(env).error("worker failed to start", { requestId, error: describeError(err) });
            return answer(request, requestId, SERVICE_UNAVAILABLE);
          }
          state = { ready: false, variables: [...new Set(err.variables)], detail: err.message };
        }
      }
      if (!state.ready) {
        const requestId = requestIdFor({ ids }, request.headers.get("x-request-id"));
        bootLogger(env).error("invalid configuration", { requestId, variables: state.variables, error: state.detail });
        return answer(request, requestId, SERVICE_UNAVAILABLE);
      }
      try {
        return await state.app.fetch(request, env, ctx);
      } catch (err) {
        // The app's onError answers every error; this only guards against a failure inside it.
        const requestId = requestIdFor({ ids }, request.headers.get("x-request-id"));
        bootLogger(env).error("unhandled error", { requestId, error: describeError(err) });
        return answer(request, requestId, new ApiError("internal_error"));
      }
    },
    // A run that fails is logged and then thrown, so that the cron's own status shows it failed.
    async scheduled(controller, env, ctx) {
      const deps = depsFor(env, "scheduled run");
      const session = deps.database.session();
      const failed: string[] = [];
      const task = (name: string, work: Promise<unknown>) =>
        work.catch((err: unknown) => {
          failed.push(name);
          deps.logger.error(`${name} failed`, { error: describeError(err) });
        });
      const run = Promise.all([
        task("payment reconciliation", reconcilePayments(paymentDepsOf(deps, session.db))),
        ...(isHourlyRun(controller.scheduledTime) ? RETENTION_TASKS : []).map((t) => task(t.name, t.run({ db: session.db, kv: deps.kv, ids: deps.ids, logger: deps.logger }, deps.clock.now()))),
        task("workflow runs", runWorkflowSchedule({ db: session.db, config: deps.config, ids: deps.ids, random: deps.random, now: deps.clock.now(), logger: deps.logger })),
        // Exports a request's waitUntil did not finish, or that wait to be retried.
        task("account exports", runAccountExports({ db: session.db, kv: deps.kv, clock: deps.clock, logger: deps.logger, budgetMs: CRON_EXPORT_BUDGET_MS })),
        // The outbox's safety net: messages whose queue message was lost or whose consumer died.
        task("outbox deliveries", deliverDueWithin(outboxWorkerDeps(deps, session.db), CRON_OUTBOX_BUDGET_MS)),
        // Seeding jobs a request's waitUntil did not finish, or that waited for the inference hosts.
        task(
          "translation jobs",
          runTranslationJobs({ db: session.db, inference: inferenceFromConfig(deps.config, deps), random: deps.random, clock: deps.clock, logger: deps.logger, budgetMs: CRON_TRANSLATION_BUDGET_MS }),
        ),
      ]).finally(() => session.release?.());
      ctx.waitUntil(run);
      await run;
      if (failed.length > 0) throw new Error(`scheduled run failed: ${failed.join(", ")}`);
    },
    // Outcomes are in the table, so the batch is acknowledged once they are written; a batch that
    // could not be handled is retried by the queue (consumeOutboxBatch), and the cron backs both.
    async queue(batch, env, ctx) {
      const deps = depsFor(env, "outbox queue batch");
      const session = deps.database.session();
      const run = consumeOutboxBatch(outboxWorkerDeps(deps, session.db), batch, env.OUTBOX_QUEUE).finally(() => session.release?.());
      ctx.waitUntil(run);
      await run;
    },
  };

  /** The app's deps for an invocation without a request; a failure to build them is logged and thrown. */
  function depsFor(env: WorkerEnv, what: string): AppDeps {
    if (state === undefined) {
      try {
        state = buildState(env);
      } catch (err) {
        bootLogger(env).error(`${what} could not start`, { error: describeError(err) });
        throw err;
      }
    }
    if (!state.ready) throw new Error(`${what} skipped: invalid configuration: ${state.variables.join(", ")}`);
    return state.deps;
  }
}

export default createWorker();

function buildState(env: WorkerEnv): State {
  const deps = buildDeps(env);
  return { ready: true, app: createApp(deps), deps };
}

function buildDeps(env: WorkerEnv): AppDeps {
  const { config, databaseUrl, local, webhookAllowedHosts } = loadConfig(env);
  const logger = createJsonLogger({ level: config.LOG_LEVEL, secrets: configuredSecrets(config) });
  const fetch = globalThis.fetch.bind(globalThis);
  const kv = createStore(config, logger, fetch);
  const deps: AppDeps = {
    config,
    database: createNeonDatabase({ url: databaseUrl, ...local }),
    kv,
    clock: systemClock,
    random: webRandom,
    ids,
    logger,
    fetch,
    tokenVerifier: createVerifier(config, kv, logger, fetch),
    apiReferenceScript: () => Promise.resolve(apiReferenceScript),
    // Cloudflare's edge sets it on every request it forwards, replacing any the client sent.
    clientAddress: (request) => canonicalAddress(request.headers.get("cf-connecting-ip") ?? ""),
    // Without the binding assets live in the isolate's memory: fine for `wrangler dev`, not for production.
    ...(env.KB_ASSETS ? { blobs: createR2BlobStore(env.KB_ASSETS) } : {}),
    // Without the queue, new outbox messages wait for the cron (every five minutes).
    ...(env.OUTBOX_QUEUE ? { outboxDispatch: queueDispatch(env.OUTBOX_QUEUE, logger) } : {}),
    ...(webhookAllowedHosts ? { webhookAllowedHosts } : {}),
  };
  if (!env.OUTBOX_QUEUE) logger.warn("OUTBOX_QUEUE is not bound: outbox messages are sent only by the cron");
  if (!env.KB_ASSETS) logger.warn("KB_ASSETS is not bound: knowledge-base asset bytes are kept per isolate");
  return deps;
}

/**
 * Workers only ever trust the configured OIDC issuer; the development issuer belongs to the local
 * Node server and is deliberately not reachable from this entry. Without an issuer (allowed
 * outside production only, see config) every token is refused, so nothing is served as anyone.
 */
function createVerifier(config: Config, kv: KeyValueStore, logger: Logger, fetch: typeof globalThis.fetch): TokenVerifier {
  if (config.OIDC_ISSUER !== undefined && config.OIDC_AUDIENCE !== undefined) {
    return createOidcVerifier({
      issuer: config.OIDC_ISSUER,
      audience: config.OIDC_AUDIENCE,
      rolesClaim: config.OIDC_ROLES_CLAIM,
      clock: systemClock,
      fetch,
      kv,
      logger,
    });
  }
  logger.warn("OIDC_ISSUER is not set: every access token is refused");
  return {
    issuer: "none",
    verify: () => Promise.reject(new TokenRejected("no OIDC issuer is configured")),
  };
}

function createStore(config: Config, logger: Logger, fetch: typeof globalThis.fetch): KeyValueStore {
  if (config.UPSTASH_REDIS_REST_URL !== undefined && config.UPSTASH_REDIS_REST_TOKEN !== undefined) {
    return createUpstashStore({ url: config.UPSTASH_REDIS_REST_URL, token: config.UPSTASH_REDIS_REST_TOKEN, prefix: config.KV_PREFIX, fetch });
  }
  logger.warn("UPSTASH_REDIS_REST_URL is not set: using an in-memory store, which is per isolate (rate limits and caches are not shared between isolates)");
  return createMemoryStore({ prefix: config.KV_PREFIX, clock: systemClock });
}

/**
 * parseConfig's rules plus the ones only Workers have, checked together so that a broken
 * deployment names every variable to fix at once rather than one per deploy.
 */
function loadConfig(bindings: WorkerEnv): { config: Config; databaseUrl: string; local: { wsProxy?: string; insecure?: boolean }; webhookAllowedHosts?: string[] } {
  // Fail closed: a Worker without NODE_ENV is production (an `[env.*]` section of wrangler.toml
  // does not inherit `[vars]`, so a new environment would otherwise run with development rules).
  const env: WorkerEnv = stringBinding(bindings.NODE_ENV) === undefined ? { ...bindings, NODE_ENV: "production" } : bindings;
  const { config, issues: found } = checkConfig(env);
  const issues: ConfigIssue[] = [...found];

  if (stringBinding(env.DATABASE_URL) === undefined) {
    // Node has an embedded database to fall back on; Workers have no file system for one.
    issues.push({ variable: "DATABASE_URL", message: "is required on Workers" });
  }

  if (stringBinding(env.NODE_ENV) === "production" && stringBinding(env.UPSTASH_REDIS_REST_URL) === undefined) {
    // Each isolate would count limits on its own: the hourly quota, the burst and AI in flight
    // multiplied by however many isolates serve a caller, with only a log line to show for it.
    issues.push({ variable: "UPSTASH_REDIS_REST_URL", message: "is required in production on Workers (rate limits and caches are shared through it)" });
  }

  // The proxy bindings let tests and `wrangler dev` reach a plain Postgres; real Neon needs neither.
  const wsProxy = stringBinding(env.NEON_WS_PROXY);
  if (wsProxy !== undefined) {
    if (!WS_PROXY.test(wsProxy)) {
      issues.push({ variable: "NEON_WS_PROXY", message: "must be host:port, optionally with a path (127.0.0.1:5433/v2)" });
    } else if (stringBinding(env.NODE_ENV) === "production") {
      // Every query, and the database password, would go through whatever listens there.
      issues.push({ variable: "NEON_WS_PROXY", message: "is not allowed in production" });
    }
  }
  const insecureRaw = stringBinding(env.NEON_INSECURE_WS);
  if (insecureRaw !== undefined && insecureRaw !== "true" && insecureRaw !== "false") {
    issues.push({ variable: "NEON_INSECURE_WS", message: "must be 'true' or 'false'" });
  }
  const insecure = insecureRaw === "true";
  if (insecure && stringBinding(env.NODE_ENV) === "production") {
    // ws:// would carry the database password in clear text.
    issues.push({ variable: "NEON_INSECURE_WS", message: "is not allowed in production" });
  }

  const allowedRaw = stringBinding(env.WEBHOOK_ALLOWED_HOSTS);
  const webhookAllowedHosts = allowedRaw?.split(",").map((h) => h.trim().toLowerCase()).filter((h) => h !== "");
  if (webhookAllowedHosts !== undefined) {
    if (stringBinding(env.NODE_ENV) === "production") {
      // Partners could point deliveries at the platform's own network.
      issues.push({ variable: "WEBHOOK_ALLOWED_HOSTS", message: "is not allowed in production" });
    } else if (!webhookAllowedHosts.every((h) => HOST_NAME.test(h))) {
      issues.push({ variable: "WEBHOOK_ALLOWED_HOSTS", message: "must be comma-separated host names or addresses" });
    }
  }

  if (config === undefined || config.DATABASE_URL === undefined || issues.length > 0) throw new ConfigError(issues);
  return {
    config,
    databaseUrl: config.DATABASE_URL,
    local: { ...(wsProxy !== undefined ? { wsProxy } : {}), ...(insecure ? { insecure } : {}) },
    ...(webhookAllowedHosts ? { webhookAllowedHosts } : {}),
  };
}

/** A host name or an IPv4 address, as allow-lists compare them (lower case). */
const HOST_NAME = /^[a-z0-9.-]{1,253}$/;

/** host:port (a bracketed IPv6 literal or a name), then an optional path; the driver adds the scheme. */
const WS_PROXY = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}(\/[\x21-\x7e]*)?$/;

function stringBinding(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

const LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error", "silent"];

/** Used before (or instead of) the app's logger; honours LOG_LEVEL when it is at least valid. */
function bootLogger(env: WorkerEnv): Logger {
  const level = LEVELS.find((l) => l === env.LOG_LEVEL) ?? "info";
  return createJsonLogger({ level, secrets: configuredSecrets(env) });
}

const SERVICE_UNAVAILABLE = new ApiError("service_unavailable");

/** An answer from outside the app, through the app's own error path (the shape its path asks for). */
function answer(request: Request, requestId: string, err: ApiError): Response {
  return errorResponse({ requestId, path: new URL(request.url).pathname }, err);
}

function describeError(err: unknown): unknown {
  return err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err);
}
