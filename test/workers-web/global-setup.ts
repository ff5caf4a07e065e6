import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { startNeonWsProxy } from "../support/neon-ws-proxy";
import { startOidcProvider } from "../support/oidc-provider";
import { databaseUrl, serverAddress, withPgClient } from "../support/pg";
import { TEST_PG_ADMIN_URL, randomSuffix } from "../support/services";
import { migrationStatements } from "../workers/global-setup";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WEB_ORIGIN = "https://web.workerd.test";
const AUDIENCE = "https://api.workerd-web.test";
const CLIENT_ID = "web-worker";

/** The API Worker bundled as it is deployed (wrangler.toml), offline and without an account. */
function bundleApiWorker(work: string): Promise<string> {
  const out = join(work, "api");
  return new Promise((resolve, reject) => {
    execFile(
      "npx",
      ["--no-install", "wrangler", "deploy", "--dry-run", "--outdir", out],
      {
        cwd: ROOT,
        timeout: 120_000,
        env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", XDG_CONFIG_HOME: join(work, "config"), CLOUDFLARE_API_TOKEN: "", NO_COLOR: "1" },
      },
      (error, stdout, stderr) => (error ? reject(new Error(`bundling the API Worker failed: ${stdout}\n${stderr}`)) : resolve(out)),
    );
  });
}

/**
 * Both Workers run in one workerd (see vitest.config.ts): the web Worker under test and the API
 * Worker behind its `API` service binding. The API Worker reaches a fresh, migrated database
 * through the Neon WebSocket proxy, and both trust the same loopback OpenID Connect provider.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const work = mkdtempSync(join(tmpdir(), "workers-web-"));
  const name = `workers_web_${randomSuffix()}`;
  const url = databaseUrl(name);
  await withPgClient(TEST_PG_ADMIN_URL, (c) => c.query(`create database "${name}"`));
  const started = await Promise.allSettled([
    bundleApiWorker(work),
    startNeonWsProxy({ allow: [serverAddress()] }),
    startOidcProvider({ audience: AUDIENCE, webClient: { clientId: CLIENT_ID, redirectUri: `${WEB_ORIGIN}/api/auth/callback`, postLogoutRedirectUri: `${WEB_ORIGIN}/` } }),
    withPgClient(url, async (c) => {
      for (const statement of migrationStatements()) await c.query(statement);
    }),
  ]);
  const teardown = async () => {
    const [, proxy, provider] = started;
    if (provider.status === "fulfilled") await provider.value.close();
    if (proxy.status === "fulfilled") await proxy.value.close();
    await withPgClient(TEST_PG_ADMIN_URL, (c) => c.query(`drop database if exists "${name}" with (force)`));
    rmSync(work, { recursive: true, force: true });
  };
  const [bundle, proxy, provider] = started;
  const failed = started.find((s) => s.status === "rejected");
  if (failed || bundle.status !== "fulfilled" || proxy.status !== "fulfilled" || provider.status !== "fulfilled") {
    // Nothing is left running or behind when a part fails to start.
    await teardown();
    throw failed?.reason;
  }

  project.provide("webDatabaseUrl", url);
  project.provide("webNeonWsProxyPort", proxy.value.port);
  project.provide("webIssuerUrl", provider.value.issuer);
  project.provide("webApiAudience", AUDIENCE);
  project.provide("webClientId", CLIENT_ID);
  project.provide("webOrigin", WEB_ORIGIN);
  project.provide("webApiBundleDir", bundle.value);

  return teardown;
}
