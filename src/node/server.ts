import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { createApp } from "../app";
import type { Config } from "../config";
import { configuredSecrets, createJsonLogger } from "../platform/logger";
import { createBufferedSink, createSharedStdoutSink } from "./log-sink";
import { buildNodeDeps } from "./deps";
import { migrateDatabase } from "./migrate";
import { withoutUnframedBody } from "./request-body";
import { answerAdapterError } from "./request-errors";
import { startSchedules } from "./schedules";
import { createBackgroundWork } from "../platform/background";

/**
 * One HTTP server process: deps → createApp → listen, and a graceful stop on SIGTERM or SIGINT.
 * On its own (`worker: false`) it also migrates the database and runs the schedules; as a worker
 * of a cluster the primary has done both, and its log batches are cut into pipe-atomic pieces
 * because the workers share one stdout.
 */
export async function runServer(config: Config, role: { worker: boolean }): Promise<void> {
  const sink = role.worker ? createSharedStdoutSink() : createBufferedSink();
  const logger = createJsonLogger({ level: config.LOG_LEVEL, sink, secrets: configuredSecrets(config) });
  const deps = await buildNodeDeps(config, logger);
  if (!role.worker) await migrateDatabase(deps.database, logger);

  const streamsEnd = new AbortController();
  const background = createBackgroundWork();
  const app = createApp({ ...deps, stopping: streamsEnd.signal, background });
  // The adapter's request listener with an error handler of ours: serve() takes none, and a
  // request it cannot parse would get an empty 400 without a request id.
  const listener = getRequestListener((req, env) => app.fetch(withoutUnframedBody(req), env), { hostname: config.HOST, errorHandler: answerAdapterError(deps) });
  const server = createServer(listener);
  server.listen(config.PORT, config.HOST, () => {
    // A cluster's primary reports the address once all its workers listen.
    if (role.worker) return;
    const info = server.address() as AddressInfo;
    logger.info("listening", { url: listeningUrl(info.address, info.port), database: deps.database.driver, store: deps.kv.kind });
  });
  const stopSchedules = role.worker ? async () => {} : startSchedules(deps, config, logger, background);

  // A port in use or a HOST that does not resolve: one line, like every failed start, not a trace.
  server.once("error", (err: NodeJS.ErrnoException) => {
    console.error(JSON.stringify({ level: "error", msg: "startup failed", error: `cannot listen on ${config.HOST}:${config.PORT}: ${err.code ?? err.message}` }));
    void stopSchedules().then(() => deps.close()).finally(() => {
      sink.flush();
      process.exit(1);
    });
  });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    const schedulesStopped = stopSchedules();
    logger.info("shutting down", { signal });
    // Translation jobs hand their job back at the next batch (the abort below also cancels the
    // model call in flight); the database stays open until they have.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    void Promise.all([closed, background.drain(), schedulesStopped]).then(() => {
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
    setTimeout(() => process.exit(0), STOP_FALLBACK_MS).unref();
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
}

/** The URL a server listening on this address and port answers at (an IPv6 address in brackets). */
export function listeningUrl(address: string, port: number): string {
  return `http://${address.includes(":") ? `[${address}]` : address}:${port}`;
}

/** How long a stopping server waits for its requests before it exits anyway. */
export const STOP_FALLBACK_MS = 5_000;
