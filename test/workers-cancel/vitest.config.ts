import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineProject } from "vitest/config";

// Requests cancelled mid-flight inside workerd, the way a client that goes away cancels them in
// production, against slow services (see global-setup.ts). The project root is this folder. It
// runs as a vitest run of its own (`npm test` runs it after the others): its global setup builds
// on the workers project's, whose modules cannot be evaluated twice in one vitest process.
export default defineProject({
  plugins: [
    cloudflareTest(({ inject }) => ({
      wrangler: { configPath: "../../wrangler.toml" },
      miniflare: {
        bindings: {
          NODE_ENV: "test",
          LOG_LEVEL: "silent",
          DATABASE_URL: inject("workersDatabaseUrl"),
          NEON_WS_PROXY: `127.0.0.1:${inject("slowWsProxyPort")}/v2`,
          NEON_INSECURE_WS: "true",
          INFERENCE_URL: inject("slowInferenceUrl"),
          OIDC_ISSUER: inject("slowIssuerUrl"),
          OIDC_AUDIENCE: inject("issuerAudience"),
          UPSTASH_REDIS_REST_URL: inject("upstashUrl"),
          UPSTASH_REDIS_REST_TOKEN: inject("upstashToken"),
          KV_PREFIX: `test-cancel-${Math.random().toString(36).slice(2)}:`,
        },
      },
    })),
  ],
  test: {
    name: "workers-cancel",
    include: ["**/*.test.ts"],
    globalSetup: ["./global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
