import cluster from "node:cluster";
import { ConfigError, parseConfig } from "../config";
import { runPrimary } from "./primary";
import { runServer } from "./server";
import { nodeWebConfig } from "./web-config";
import { startWebApp } from "./web-server";
import { configuredSecrets, createJsonLogger } from "../platform/logger";

/**
 * The Node entry: validated config, then one server process, or with WEB_CONCURRENCY above 1 a
 * primary that keeps that many server workers (this same file, run again by node:cluster).
 */
async function main(): Promise<void> {
  let config;
  let web;
  try {
    config = parseConfig(process.env);
    web = nodeWebConfig(process.env, config);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  // The API first: a second server on the same DATA_DIR or port stops here, naming the cause,
  // before the web app takes its own port.
  if (config.WEB_CONCURRENCY === 1) await runServer(config, { worker: false });
  else if (cluster.isPrimary) await runPrimary(config);
  else return runServer(config, { worker: true });
  // The web app runs once, in the first process (the sole server or the cluster's primary).
  if ("off" in web) createJsonLogger({ level: config.LOG_LEVEL, secrets: configuredSecrets(config) }).warn(`web app off: ${web.off}`);
  else await startWebApp(config, web);
}

main().catch((err: unknown) => {
  console.error(JSON.stringify({ level: "error", msg: "startup failed", error: err instanceof Error ? err.message : String(err) }));
  process.exit(1);
});
