import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../support/environment";
import { freePort, runTs } from "../support/process";
import { TEST_REDIS_URL } from "../support/services";
import { readFileSync } from "node:fs";
import { API_NODE_ARGS } from "../../bench/lib/servers";

const run = (env: Record<string, string>) => runTs("src/node/main.ts", [], env);

async function waitForHealth(url: string, timeoutMs: number): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fetch(url);
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 150));
    }
  }
}

describe("the Node entry (npm start)", () => {
  it("is started by the benches with the same node arguments as npm start", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toBe(`node ${API_NODE_ARGS.join(" ")}`);
  });

  const env = useTestDatabase({ migrated: false });

  it("refuses to start on a malformed variable and names it", async () => {
    const proc = run({ DATABASE_URL: "mysql://nope", PORT: "not-a-port" });
    expect(await proc.exited).toBe(1);
    expect(proc.output()).toContain("DATABASE_URL");
    expect(proc.output()).toContain("PORT");
  });

  it("refuses to start in production without an identity provider", async () => {
    const proc = run({ NODE_ENV: "production" });
    expect(await proc.exited).toBe(1);
    expect(proc.output()).toContain("OIDC_ISSUER");
  });

  it("migrates an empty database, serves health on Postgres and Redis, and stops on SIGTERM", { timeout: 40_000 }, async () => {
    const port = await freePort();
    const proc = run({ DATABASE_URL: env.db.url, REDIS_URL: TEST_REDIS_URL, PORT: String(port), LOG_LEVEL: "info" });
    try {
      const res = await waitForHealth(`http://127.0.0.1:${port}/health`, 30_000);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ status: "ok", checks: { database: "ok", store: "ok" } });
      proc.child.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
      // Log lines are written in batches; a clean stop flushes them.
      expect(proc.output()).toContain('"msg":"migrations checked"');
    } finally {
      proc.child.kill("SIGKILL");
    }
  });
});
