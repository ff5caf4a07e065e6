import { existsSync, readdirSync, readFileSync } from "node:fs";
import pg from "pg";

/**
 * CPU time spent by processes, from /proc (Linux). On a shared, busy machine latency and
 * throughput swing with the neighbours' load; CPU milliseconds per request barely do, so the
 * benches print both.
 */
export function cpuMs(pids: number[]): number {
  const ticksPerSecond = 100; // USER_HZ on Linux
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      // Fields after the command name (which may contain spaces) start after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
    } catch {
      // The process is gone; its time is lost to the measurement.
    }
  }
  return (ticks * 1000) / ticksPerSecond;
}

/**
 * CPU milliseconds per process, for deltas over a run: a process that ends during the run (a
 * pooled connection closed when idle) is left out of the delta instead of counting negative.
 */
export function cpuMsByPid(pids: number[]): Map<number, number> {
  return new Map(pids.map((pid) => [pid, cpuMs([pid])] as const).filter(([pid]) => existsSync(`/proc/${pid}/stat`)));
}

/** CPU milliseconds spent between two cpuMsByPid readings by the processes alive at both. */
export function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let ms = 0;
  for (const [pid, start] of before) {
    const end = after.get(pid);
    if (end !== undefined) ms += end - start;
  }
  return ms;
}

/** A process and all its descendants (a cluster primary and its workers), from /proc (Linux). */
export function processTree(pid: number): number[] {
  const pids = [pid];
  for (let i = 0; i < pids.length; i++) {
    try {
      for (const task of readdirSync(`/proc/${pids[i]}/task`)) {
        const children = readFileSync(`/proc/${pids[i]}/task/${task}/children`, "utf8").trim();
        if (children) pids.push(...children.split(" ").map(Number));
      }
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Backend pids of the Postgres connections open to one database (the API's pool). */
export async function postgresBackends(adminUrl: string, database: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>("select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()", [database]);
    return rows.map((r) => r.pid);
  } finally {
    await client.end();
  }
}

/** Pids of the local redis-server processes (the bench's Redis is on this machine). */
export function redisPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "redis-server") pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
