import cluster, { type Worker } from "node:cluster";
import type { Config } from "../config";
import { configuredSecrets, createJsonLogger } from "../platform/logger";
import { buildNodeDeps } from "./deps";
import { createSharedStdoutSink } from "./log-sink";
import { migrateDatabase } from "./migrate";
import { startSchedules } from "./schedules";
import { createBackgroundWork } from "../platform/background";
import { listeningUrl, STOP_FALLBACK_MS } from "./server";

/** More unexpected worker exits than this in a minute: something is wrong with every worker, not one. */
const RESTARTS_PER_MINUTE = 5;

/**
 * The primary of a worker cluster (WEB_CONCURRENCY above 1): it migrates the database, runs the
 * schedules and keeps WEB_CONCURRENCY workers serving HTTP on the one port (node:cluster hands
 * each new connection to a worker in turn). A worker that exits unexpectedly is replaced; one
 * that exits before it ever listened (a port in use, a bad HOST) stops the whole server with
 * exit code 1, as a single process would. SIGTERM or SIGINT stops the workers gracefully first.
 */
export async function runPrimary(config: Config): Promise<void> {
  const sink = createSharedStdoutSink();
  const logger = createJsonLogger({ level: config.LOG_LEVEL, sink, secrets: configuredSecrets(config) });
  const deps = await buildNodeDeps(config, logger);
  await migrateDatabase(deps.database, logger);
  const background = createBackgroundWork();
  const stopSchedules = startSchedules(deps, config, logger, background);

  const listening = new Set<Worker>();
  const exits: number[] = [];
  let announced = false;
  let stopping = false;

  const stop = (code: number, signal?: string) => {
    if (stopping) return;
    stopping = true;
    const schedulesStopped = stopSchedules();
    if (signal) logger.info("shutting down", { signal });
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      // A translation job of the schedules hands its job back first, and the outbox records or
      // releases its attempts in flight.
      void Promise.all([background.drain(), schedulesStopped])
        .then(() => deps.close())
        .then(() => {
        logger.info("stopped");
        sink.flush();
        process.exit(code);
      });
    };
    const running = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
    if (running.length === 0) return finish();
    let left = running.length;
    for (const worker of running) {
      worker.once("exit", () => {
        if (--left === 0) finish();
      });
      worker.process.kill("SIGTERM");
    }
    // Each worker cuts its own requests after STOP_FALLBACK_MS; one that hangs past that is killed.
    setTimeout(() => {
      for (const worker of running) if (!worker.isDead()) worker.process.kill("SIGKILL");
      finish();
    }, STOP_FALLBACK_MS + 2_000).unref();
  };

  const fork = () => {
    const worker = cluster.fork();
    worker.once("listening", (address) => {
      listening.add(worker);
      if (announced || listening.size < config.WEB_CONCURRENCY) return;
      announced = true;
      logger.info("listening", { url: listeningUrl(address.address ?? config.HOST, address.port), workers: config.WEB_CONCURRENCY, database: deps.database.driver, store: deps.kv.kind });
    });
    worker.once("exit", (code, signal) => {
      listening.delete(worker);
      if (stopping) return;
      const how = signal ?? `code ${code}`;
      // The worker has said why in its own log line (a port in use, say).
      if (!announced) {
        logger.error("startup failed", { error: `worker ${worker.process.pid} exited with ${how} before listening` });
        return stop(1);
      }
      const now = Date.now();
      exits.push(now);
      while ((exits[0] ?? now) < now - 60_000) exits.shift();
      if (exits.length > RESTARTS_PER_MINUTE) {
        logger.error("workers keep exiting; stopping", { exitsInLastMinute: exits.length });
        return stop(1);
      }
      logger.error("worker exited; starting another", { pid: worker.process.pid, exit: how });
      fork();
    });
  };
  for (let i = 0; i < config.WEB_CONCURRENCY; i++) fork();
  process.on("SIGINT", () => stop(0, "SIGINT"));
  process.on("SIGTERM", () => stop(0, "SIGTERM"));
}
