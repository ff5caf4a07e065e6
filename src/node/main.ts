import cluster from "node:cluster";
import { ConfigError, parseConfig } from "../config";
import { runPrimary } from "./primary";
import { runServer } from "./server";

/**
 * The Node entry: validated config, then one server process, or with WEB_CONCURRENCY above 1 a
 * primary that keeps that many server workers (this same file, run again by node:cluster).
 */
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
  if (config.WEB_CONCURRENCY === 1) return runServer(config, { worker: false });
  return cluster.isPrimary ? runPrimary(config) : runServer(config, { worker: true });
}

main().catch((err: unknown) => {
  console.error(JSON.stringify({ level: "error", msg: "startup failed", error: err instanceof Error ? err.message : String(err) }));
  process.exit(1);
});
