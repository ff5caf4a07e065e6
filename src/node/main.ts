import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { createApp } from "../app";
import { ConfigError, parseConfig } from "../config";
import { createJsonLogger } from "../platform/logger";
import { createBufferedSink } from "./log-sink";
import { buildNodeDeps } from "./deps";
import { migrateDatabase } from "./migrate";
import { withoutUnframedBody } from "./request-body";
import { answerAdapterError } from "./request-errors";
import { paymentDepsOf } from "../services/payments/context";
import { reconcilePayments } from "../services/payments/reconcile";
import { pruneEventOutbox } from "../services/matching/event-retention";
import { pruneImpressionCounts } from "../services/discovery/impressions";
import type { Db } from "../db/port";

const PRUNE_FIRST_AFTER_MS = 60_000;
const PRUNE_EVERY_MS = 3_600_000;

/** The Node entry: validated config → deps → migrations → createApp → listen. Nothing else. */
async function main(): Promise<void> {
  let config;
  try {
    config = parseConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  const sink = createBufferedSink();
  const logger = createJsonLogger({ level: config.LOG_LEVEL, sink });
  const deps = await buildNodeDeps(config, logger);
  await migrateDatabase(deps.database, logger);

  const streamsEnd = new AbortController();
  const app = createApp({ ...deps, stopping: streamsEnd.signal });
  // The adapter's request listener with an error handler of ours: serve() takes none, and a
  // request it cannot parse would get an empty 400 without a request id.
  const listener = getRequestListener((req, env) => app.fetch(withoutUnframedBody(req), env), { hostname: config.HOST, errorHandler: answerAdapterError(deps) });
  const server = createServer(listener);
  server.listen(config.PORT, config.HOST, () => {
    const info = server.address() as AddressInfo;
    logger.info("listening", { url: `http://${info.address.includes(":") ? `[${info.address}]` : info.address}:${info.port}`, database: deps.database.driver, store: deps.kv.kind });
  });

  // The Node twin of the Workers cron trigger; a run still going when the next is due is not doubled.
  let reconciling = false;
  const intervalSeconds = config.PAYMENT_RECONCILE_INTERVAL_SECONDS;
  const reconcile =
    intervalSeconds > 0
      ? setInterval(() => {
          if (reconciling) return;
          reconciling = true;
          void reconcilePayments(paymentDepsOf(deps, deps.database.session().db))
            .catch((err: unknown) => logger.error("payment reconciliation failed", { error: err instanceof Error ? err.message : String(err) }))
            .finally(() => {
              reconciling = false;
            });
        }, intervalSeconds * 1000)
      : undefined;
  reconcile?.unref();

  // The event outbox keeps EVENT_RETENTION_DAYS and feed impressions two days; older rows are
  // pruned hourly, and once soon after the start so a server that restarts often still prunes.
  const upkeep = (name: string, step: (db: Db, now: number, log: typeof logger) => Promise<void>) =>
    void step(deps.database.session().db, deps.clock.now(), logger).catch((err: unknown) => logger.error(`${name} failed`, { error: err instanceof Error ? err.message : String(err) }));
  const prune = () => {
    upkeep("event outbox pruning", pruneEventOutbox);
    upkeep("impression pruning", pruneImpressionCounts);
  };
  const firstPrune = setTimeout(prune, PRUNE_FIRST_AFTER_MS);
  const pruning = setInterval(prune, PRUNE_EVERY_MS);
  firstPrune.unref();
  pruning.unref();
  const stopTimers = () => {
    clearInterval(reconcile);
    clearInterval(pruning);
    clearTimeout(firstPrune);
  };

  // A port in use or a HOST that does not resolve: one line, like every failed start, not a trace.
  server.once("error", (err: NodeJS.ErrnoException) => {
    stopTimers();
    console.error(JSON.stringify({ level: "error", msg: "startup failed", error: `cannot listen on ${config.HOST}:${config.PORT}: ${err.code ?? err.message}` }));
    void deps.close().finally(() => {
      sink.flush();
      process.exit(1);
    });
  });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    stopTimers();
    logger.info("shutting down", { signal });
    server.close(() => {
      void deps.close().then(() => {
        logger.info("stopped");
        sink.flush();
        process.exit(0);
      });
    });
    // Open event streams never end on their own and would hold close() until the fallback
    // below, which skips deps.close() and the log flush. The app ends them (their clients
    // reconnect with Last-Event-ID). close() shuts only the connections idle when it is
    // called; one whose response ends later would be kept alive for its keep-alive timeout.
    streamsEnd.abort();
    setInterval(() => server.closeIdleConnections(), 50).unref();
    // A request still running after this long is cut.
    setTimeout(() => process.exit(0), 5_000).unref();
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
}

main().catch((err: unknown) => {
  console.error(JSON.stringify({ level: "error", msg: "startup failed", error: err instanceof Error ? err.message : String(err) }));
  process.exit(1);
});
