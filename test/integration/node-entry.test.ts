import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { TEST_REDIS_URL } from "../support/services";

const ENTRY = ["--import", "tsx", "src/node/main.ts"];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      srv.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

function run(env: Record<string, string>): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  let out = "";
  const child = spawn(process.execPath, ENTRY, { env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, output: () => out, exited };
}

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
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ migrated: false });
  });
  afterAll(() => db.drop());

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
    const proc = run({ DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, PORT: String(port), LOG_LEVEL: "info" });
    try {
      const res = await waitForHealth(`http://127.0.0.1:${port}/health`, 30_000);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ status: "ok", checks: { database: "ok", store: "ok" } });
      expect(proc.output()).toContain('"msg":"migrations checked"');
      proc.child.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
    } finally {
      proc.child.kill("SIGKILL");
    }
  });
});
