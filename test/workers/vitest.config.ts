import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineProject } from "vitest/config";

// The project root is this folder, so every path below is relative to test/workers.
export default defineProject({
  plugins: [
    cloudflareTest(({ inject }) => ({
      wrangler: { configPath: "../../wrangler.toml" },
      miniflare: {
        bindings: {
          NODE_ENV: "test",
          LOG_LEVEL: "silent",
          DATABASE_URL: inject("workersDatabaseUrl"),
          NEON_WS_PROXY: `127.0.0.1:${inject("neonWsProxyPort")}/v2`,
          NEON_INSECURE_WS: "true",
          INFERENCE_URL: inject("inferenceUrl"),
          VOICE_RUNTIME_URL: inject("voiceRuntimeUrl"),
          VOICE_RUNTIME_SECRET: inject("voiceRuntimeSecret"),
          // The loopback partner endpoint of the global setup (refused in production).
          WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
        },
      },
    })),
  ],
  test: {
    name: "workers",
    include: ["**/*.test.ts"],
    globalSetup: ["./global-setup.ts"],
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
