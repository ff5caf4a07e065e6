import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineProject } from "vitest/config";
import { unstable_readConfig } from "wrangler";

// The web Worker in workerd (wrangler.web.toml), with the API Worker as a second Worker of the same
// workerd behind its `API` service binding, as they are deployed. The project root is this folder.
// It runs as a vitest run of its own (`npm test` runs it after the others): its global setup imports
// the workers project's, whose modules cannot be evaluated twice in one vitest process.

const readConfig = (file: string) => unstable_readConfig({ config: fileURLToPath(new URL(`../../${file}`, import.meta.url)) });
/** The API Worker's own deployment settings (its runtime), and the Worker the web Worker's `API` binding names. */
const api = readConfig("wrangler.toml");
const API_WORKER = readConfig("wrangler.web.toml").services?.find((s: { binding: string }) => s.binding === "API")?.service;
// A binding naming another Worker than the API would fail in production the same way.
if (API_WORKER !== api.name) throw new Error(`wrangler.web.toml binds API to ${API_WORKER}, but the API Worker is ${api.name}`);

/**
 * The dry-run bundle's modules: the entry first (workerd's main module), then the API reference
 * script as the Text module wrangler.toml's [[rules]] make it.
 */
function apiModules(dir: string) {
  const text = readdirSync(dir).filter((file) => file.endsWith(".js") && file !== "api.js");
  return [{ type: "ESModule" as const, path: join(dir, "api.js") }, ...text.map((file) => ({ type: "Text" as const, path: join(dir, file) }))];
}

export default defineProject({
  plugins: [
    cloudflareTest(({ inject }) => ({
      wrangler: { configPath: "../../wrangler.web.toml" },
      miniflare: {
        bindings: {
          NODE_ENV: "test",
          LOG_LEVEL: "silent",
          WEB_ORIGIN: inject("webOrigin"),
          WEB_COOKIE_SECRET: `workers-web-cookie-secret-${crypto.randomUUID()}`,
          OIDC_ISSUER: inject("webIssuerUrl"),
          OIDC_CLIENT_ID: inject("webClientId"),
        },
        serviceBindings: { API: API_WORKER },
        workers: [
          {
            name: API_WORKER,
            modulesRoot: inject("webApiBundleDir"),
            modules: apiModules(inject("webApiBundleDir")),
            compatibilityDate: api.compatibility_date,
            compatibilityFlags: api.compatibility_flags,
            bindings: {
              NODE_ENV: "test",
              LOG_LEVEL: "silent",
              DATABASE_URL: inject("webDatabaseUrl"),
              NEON_WS_PROXY: `127.0.0.1:${inject("webNeonWsProxyPort")}/v2`,
              NEON_INSECURE_WS: "true",
              OIDC_ISSUER: inject("webIssuerUrl"),
              OIDC_AUDIENCE: inject("webApiAudience"),
            },
          },
        ],
      },
    })),
  ],
  test: {
    name: "workers-web",
    include: ["**/*.test.ts"],
    globalSetup: ["./global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
