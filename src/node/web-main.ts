import { ConfigError, parseConfig } from "../config";
import { nodeWebConfig } from "./web-config";
import { startWebApp } from "./web-server";

/**
 * The web app alone on Node (`npm run start:web`), for a host that serves it apart from the API:
 * API_URL names the API (in development it defaults to the API's own HOST and PORT).
 */
async function main(): Promise<void> {
  let web;
  let api;
  try {
    api = parseConfig(process.env);
    web = nodeWebConfig(process.env, api);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  if ("off" in web) {
    console.error(`web app off: ${web.off}`);
    process.exit(1);
  }
  const served = await startWebApp(api, web);
  const stop = () => void served.close().then(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((err: unknown) => {
  console.error(JSON.stringify({ level: "error", msg: "startup failed", error: err instanceof Error ? err.message : String(err) }));
  process.exit(1);
});
