import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import pg from "pg";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const PG_ADMIN_URL = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";

export { freePort } from "../../test/support/process";

/**
 * A key prefix of the bench's own in the shared Redis, and the cleanup that removes every key
 * under it. Rate-limit windows, feed sessions and context entries would otherwise stay behind
 * until their TTLs ran out: a few runs left over 150 MB in Redis, which later runs then share.
 */
export function benchKvPrefix(name: string): { prefix: string; dropKeys(): Promise<number> } {
  const prefix = `bench:${name}:${Date.now()}:`;
  return {
    prefix,
    async dropKeys() {
      const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
      let dropped = 0;
      try {
        await redis.connect();
        for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1000 }) as AsyncIterable<string[]>) {
          if (keys.length > 0) dropped += await redis.unlink(...keys);
        }
      } finally {
        redis.disconnect();
      }
      return dropped;
    },
  };
}

/** The databases this run created: a seeded million profiles takes gigabytes of disk. */
const createdDatabases = new Set<string>();

/** A fresh database for one benchmark run; the API's own start applies the migrations. */
export async function freshDatabase(name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`drop database if exists "${name}" with (force)`);
  await admin.query(`create database "${name}"`);
  await admin.end();
  createdDatabases.add(name);
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops every database this run created (their connections are ended) and names them. */
export async function dropBenchDatabases(): Promise<string[]> {
  const names = [...createdDatabases];
  if (names.length === 0) return names;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    for (const name of names) await admin.query(`drop database if exists "${name}" with (force)`);
  } finally {
    await admin.end();
  }
  createdDatabases.clear();
  return names;
}

export interface Child {
  url: string;
  /** The server process's pid (with `nofile`, bash execs into node, so it is node's pid). */
  pid: number;
  stop(): Promise<void>;
}

/**
 * A bash prefix that raises the open-files limit to `n` (soft and hard) and execs "$0" "$@". Raising
 * the hard limit needs CAP_SYS_RESOURCE; without it (a container that drops it) the soft limit
 * goes up to the hard limit instead, and the caller sees the limit it got in /proc/<pid>/limits.
 */
export function raiseNofileScript(n: number): string {
  return `ulimit -Hn ${n} 2>/dev/null; ulimit -n ${n} 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec "$0" "$@"`;
}

export interface StartOptions {
  /** Raise the open-files limit to this before exec'ing node (see raiseNofileScript). */
  nofile?: number;
}

/** Starts a server process and waits until `readyPath` answers. */
export async function startProcess(args: string[], env: Record<string, string>, port: number, readyPath = "/health", options: StartOptions = {}): Promise<Child> {
  const [command, argv] = options.nofile
    ? ["bash", ["-c", raiseNofileScript(options.nofile), process.execPath, ...args]]
    : [process.execPath, args];
  const child: ChildProcess = spawn(command, argv, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", ...env, PORT: String(port) },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await fetch(url + readyPath);
      break;
    } catch {
      if (child.exitCode !== null) throw new Error(`${args.join(" ")} exited with ${child.exitCode}`);
      if (Date.now() > deadline) throw new Error(`${args.join(" ")} did not start`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return {
    url,
    pid: child.pid as number,
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 5_000).unref();
      }),
  };
}

/** The node arguments of `npm start` after its build step (package.json), so the benches measure what production runs. */
export const API_NODE_ARGS = ["--enable-source-maps", "dist/node/main.mjs"];

let built = false;

/**
 * Builds the Node entry as `npm start` does (`npm run build`), once per process. Test files build
 * it side by side, each in a process of its own, and esbuild rewrites its output in place: a server
 * starting meanwhile could load the bundle half written. So the build goes to a folder of its own
 * beside dist/node (the source map's relative paths stay right) and each file is renamed into
 * place whole; every build writes the same bytes.
 */
export function buildApi(): void {
  if (built) return;
  const out = join(ROOT, "dist", "node");
  mkdirSync(out, { recursive: true });
  const staging = mkdtempSync(join(ROOT, "dist", "node-build-"));
  try {
    execFileSync("npm", ["run", "-s", "build", "--", `--outfile=${join(staging, "main.mjs")}`], { cwd: ROOT, stdio: "inherit" });
    // The map first: the bundle names it, and a server that loads the new bundle reads the map then.
    renameSync(join(staging, "main.mjs.map"), join(out, "main.mjs.map"));
    renameSync(join(staging, "main.mjs"), join(out, "main.mjs"));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  built = true;
}

/**
 * The API as `npm start` runs it. With `profileDir` (or BENCH_CPU_PROF_DIR=<dir>) it writes a V8 CPU
 * profile of the API process there when it stops.
 */
export function startApi(env: Record<string, string>, port: number, options: StartOptions & { profileDir?: string } = {}): Promise<Child> {
  buildApi();
  const profileDir = options.profileDir ?? process.env.BENCH_CPU_PROF_DIR;
  const profile = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
  return startProcess([...profile, ...API_NODE_ARGS], { LOG_LEVEL: "info", ...env }, port, "/health", options);
}

/** The fake inference host in a process of its own (fake-inference-host.ts), answering after `delayMs`. */
export async function startFakeInferenceHost(delayMs: number): Promise<{ url: string; pid: number; stop: () => void }> {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/lib/fake-inference-host.ts", String(delayMs)], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const match = /http:\/\/[\d.]+:\d+/.exec(out);
      if (match) resolve(match[0]);
    });
    child.once("exit", (code) => reject(new Error(`fake inference host exited with ${code}`)));
  });
  return { url, pid: child.pid as number, stop: () => child.kill("SIGTERM") };
}

/**
 * One bench person per token, signed in through the API: the first request creates the user and
 * tells us the id. Fifty at a time, so the setup does not queue a thousand requests at once.
 */
export async function signInAll(apiUrl: string, tokens: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < tokens.length; i += 50) {
    const batch = await Promise.all(
      tokens.slice(i, i + 50).map(async (t) => {
        const res = await fetch(`${apiUrl}/v1/auth/test`, { headers: { authorization: `Bearer ${t}` } });
        if (res.status !== 200) throw new Error(`sign-in answered ${res.status}: ${await res.text()}`);
        return ((await res.json()) as { user: { id: string } }).user.id;
      }),
    );
    ids.push(...batch);
  }
  return ids;
}

export interface Build {
  name: string;
  /** Where `dist/node/main.mjs` and `migrations/` of this build are. */
  dir: string;
}

/**
 * The Node entry of a git ref, built as `npm run build` builds it, in a directory of its own with
 * that ref's migrations (the server applies them at start) and this checkout's node_modules.
 */
export function buildRef(ref: string): Build {
  const dir = mkdtempSync(join(tmpdir(), "bench-ref-"));
  const commit = execFileSync("git", ["rev-parse", "--short", ref], { cwd: ROOT, encoding: "utf8" }).trim();
  // What the built entry reads at run time besides its bundle (locales: the source translation
  // bundles loaded at start), as far as that ref has them.
  const top = execFileSync("git", ["ls-tree", "--name-only", commit], { cwd: ROOT, encoding: "utf8" }).split("\n");
  const paths = ["src", "migrations", "vendor", "locales", "package.json"].filter((p) => top.includes(p));
  execFileSync("bash", ["-c", `git archive ${commit} ${paths.join(" ")} | tar -x -C "${dir}"`], { cwd: ROOT, stdio: "inherit" });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  execFileSync("npm", ["run", "-s", "build"], { cwd: dir, stdio: "inherit" });
  return { name: `${ref} (${commit})`, dir };
}
