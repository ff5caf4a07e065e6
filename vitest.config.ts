import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "node",
          include: ["test/unit/**/*.test.ts", "test/integration/**/*.test.ts"],
          environment: "node",
          globalSetup: ["test/support/global-setup.ts"],
          setupFiles: ["test/support/setup-redis.ts"],
          testTimeout: 20_000,
          hookTimeout: 60_000,
        },
      },
      "test/workers/vitest.config.ts",
    ],
  },
});
