import { readdirSync, readFileSync } from "node:fs";
import { request as httpRequest, Agent } from "node:http";
import { createServer, type AddressInfo } from "node:net";
import { beforeAll, describe, expect, it } from "vitest";
import { cpuMs, processTree } from "../../bench/lib/cpu";
import { API_NODE_ARGS, buildApi } from "../../bench/lib/servers";
import { useTestDatabase } from "../support/environment";
import { freePort, runNode, startListening, type TsProcess } from "../support/process";
import { TEST_REDIS_URL } from "../support/services";

/** The entry as `npm start` runs it, with WEB_CONCURRENCY workers under one primary. */
const run = (env: Record<string, string>) => runNode(API_NODE_ARGS, env);
beforeAll(buildApi, 60_000);

/** The primary's worker processes (they start none of their own). */
const workerPids = (primary: number) => processTree(primary).slice(1);

/** Processes started with PORT=<port> in their environment: the server's primary and workers. */
function processesOnPort(port: number): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`PORT=${port}`);
      } catch {
        return false;
      }
    })
    .map(Number);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await Promise.resolve().then(probe).catch(() => undefined);
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    // The poll interval of a wait with a deadline, on state held by other processes.
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The JSON log lines a process wrote to stdout; throws on a line that is not one whole JSON object. */
const logLines = (proc: TsProcess) =>
  proc
    .stdout()
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { msg: string; [field: string]: unknown });

describe("the Node entry with WEB_CONCURRENCY workers", () => {
  const env = useTestDatabase({ migrated: false });
  const start = async (extra: Record<string, string> = {}) => {
    const listening = (proc: TsProcess) => {
      try {
        return logLines(proc).some((l) => l.msg === "listening");
      } catch {
        return false; // a line still being written
      }
    };
    // WEB_PORT=0: no web app, which would take its fixed port 8788 and the development issuer PORT+2,
    // ports no test has made sure of. Three processes each load the bundle before the line: about
    // 5 s on an idle machine, several times that on a loaded one.
    const { proc, port } = await startListening(async () => {
      const port = await freePort();
      return { port, proc: run({ DATABASE_URL: env.db.url, REDIS_URL: TEST_REDIS_URL, KV_PREFIX: `entry-workers-${port}:`, PORT: String(port), WEB_PORT: "0", WEB_CONCURRENCY: "2", ...extra }) };
    }, listening, 60_000);
    return { proc, url: `http://127.0.0.1:${port}`, port };
  };

  it("migrates once, serves from two workers, keeps every log line whole, and stops them all on SIGTERM", { timeout: 90_000 }, async () => {
    const { proc, url, port } = await start();
    try {
      const listening = logLines(proc).find((l) => l.msg === "listening");
      expect(listening).toMatchObject({ url, workers: 2, database: "pg", store: "redis" });
      expect(logLines(proc).filter((l) => l.msg === "migrations checked")).toHaveLength(1);
      const workers = workerPids(proc.child.pid!);
      expect(workers).toHaveLength(2);

      // 600 requests over 40 connections: both workers log at once into the one stdout.
      const cpuBefore = workers.map((pid) => cpuMs([pid]));
      const agent = new Agent({ keepAlive: true, maxSockets: 40 });
      const get = () =>
        new Promise<number>((resolve, reject) => {
          const req = httpRequest({ host: "127.0.0.1", port, path: "/health", agent }, (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
          });
          req.on("error", reject);
          req.end();
        });
      const statuses = await Promise.all(Array.from({ length: 600 }, get));
      agent.destroy();
      expect(statuses.every((s) => s === 200)).toBe(true);
      // Both workers served (node:cluster hands the connections out in turn).
      workers.forEach((pid, i) => expect(cpuMs([pid]), `worker ${pid}`).toBeGreaterThan(cpuBefore[i]!));

      proc.child.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
      for (const pid of workers) expect(alive(pid), `worker ${pid}`).toBe(false);
      // Every line parses: no worker's batch was cut into by another's.
      const lines = logLines(proc);
      expect(lines.filter((l) => l.msg === "request" && l.route === "/health")).toHaveLength(600);
      // The primary and each worker say they stopped.
      expect(lines.filter((l) => l.msg === "stopped")).toHaveLength(3);
    } finally {
      proc.child.kill("SIGKILL");
    }
  });

  it("replaces a worker that dies, and keeps serving", { timeout: 90_000 }, async () => {
    const { proc, url } = await start();
    try {
      const [victim, survivor] = workerPids(proc.child.pid!);
      process.kill(victim!, "SIGKILL");
      const replaced = await until("a replacement worker", () => {
        const now = workerPids(proc.child.pid!);
        return now.length === 2 && !now.includes(victim!) ? now : undefined;
      });
      expect(replaced).toContain(survivor);
      await until("the replacement to answer", async () => {
        const statuses = await Promise.all(Array.from({ length: 10 }, () => fetch(`${url}/health`, { headers: { connection: "close" } }).then((r) => r.status)));
        return statuses.every((s) => s === 200) || undefined;
      });
      expect(logLines(proc).find((l) => l.msg === "worker exited; starting another")).toMatchObject({ pid: victim, exit: "SIGKILL" });
    } finally {
      proc.child.kill("SIGKILL");
    }
  });

  it("takes its workers down with it when the primary is killed outright", { timeout: 90_000 }, async () => {
    const { proc } = await start();
    const workers = workerPids(proc.child.pid!);
    expect(workers).toHaveLength(2);
    proc.child.kill("SIGKILL");
    await proc.exited;
    // A worker whose primary is gone exits on its own instead of serving unsupervised.
    await until("the orphaned workers to exit", () => workers.every((pid) => !alive(pid)) || undefined, 10_000);
  });

  it("refuses to start when its port is taken, in one line per process, and leaves no worker behind", { timeout: 60_000 }, async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const proc = run({ DATABASE_URL: env.db.url, REDIS_URL: TEST_REDIS_URL, PORT: String(port), WEB_PORT: "0", WEB_CONCURRENCY: "2", LOG_LEVEL: "error" });
      expect(await proc.exited).toBe(1);
      expect(proc.output()).toContain(`cannot listen on 127.0.0.1:${port}: EADDRINUSE`);
      expect(proc.output()).toMatch(/"msg":"startup failed","error":"worker \d+ exited with code 1 before listening"/);
      expect(proc.output()).not.toMatch(/^\s+at /m);
      expect(processesOnPort(port)).toEqual([]);
    } finally {
      taken.close();
    }
  });

  it("refuses more than one worker on the embedded database or the in-process store, naming both", async () => {
    const proc = run({ WEB_CONCURRENCY: "2" });
    expect(await proc.exited).toBe(1);
    expect(proc.output()).toContain("DATABASE_URL is required when WEB_CONCURRENCY is above 1");
    expect(proc.output()).toContain("REDIS_URL or UPSTASH_REDIS_REST_URL is required when WEB_CONCURRENCY is above 1");
  });
});
