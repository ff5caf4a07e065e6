import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { startTestIssuer } from "../test/support/issuer";
import { enterpriseUsers } from "./auth";
import { cpuMs, processTree } from "./lib/cpu";
import { load, median, printTable, type LoadResult } from "./lib/load";
import { API_NODE_ARGS, ROOT, REDIS_URL, benchKvPrefix, buildApi, freePort, freshDatabase, startFakeInferenceHost, startProcess, type Child } from "./lib/servers";

/**
 * The same production-shaped workload against two builds of the API, alternated A/B/A/B in one
 * run, for deciding whether a change pays for itself (docs/design/performance.md):
 *   npm run bench -- versions --base <git ref> [--head <git ref>] [--workload auth|not-found|unmatched|ai]
 *     [--node-args-a "<flags>"] [--node-args-b "<flags>"]
 * Without --head the working tree is B. The node-args flags put node flags before each build's
 * entry (the same ref on both sides with different flags compares runtime tuning). Each build gets its own database (its own migrations) and
 * Redis prefix; every request is authenticated with a JWT from a loopback issuer and rate-limited
 * in Redis, with users on the enterprise plan so the limiter allows all of them.
 *   auth       GET /v1/auth/test: 200, one access line each.
 *   not-found  GET /api/payments/{id}/status for ids that do not exist: a Postgres lookup, then a
 *              404 error answer (ApiError, error body, access line).
 *   unmatched  GET /scan/<random>/wp-login.php, no credentials: a path no route takes, as scanners
 *              send them: 404 answer and access line.
 *   ai         POST /api/v1/ai-agents/chat/response against a fake inference host answering after
 *              --delay ms (default 500).
 */
export type Workload = "auth" | "not-found" | "unmatched" | "ai";

export interface VersionsOptions {
  base: string;
  head?: string;
  workload: Workload;
  seconds: number;
  rounds: number;
  connections: number;
  users: number;
  delayMs: number;
  nodeArgsA?: string[];
  nodeArgsB?: string[];
}

const BUILDS = join(ROOT, "node_modules", ".cache", "bench-versions");

/** The Node entry of a commit, bundled as `npm run build` does, under node_modules/.cache (packages resolve from the root). */
function buildRef(ref: string): { dir: string; label: string } {
  const sha = execFileSync("git", ["rev-parse", "--verify", `${ref}^{commit}`], { cwd: ROOT, encoding: "utf8" }).trim();
  const dir = join(BUILDS, sha);
  if (!existsSync(join(dir, "dist", "node", "main.mjs"))) {
    mkdirSync(dir, { recursive: true });
    // Whichever of these the commit has (src/ imports vendored assets from vendor/).
    const paths = execFileSync("git", ["ls-tree", "--name-only", sha, "src", "migrations", "vendor"], { cwd: ROOT, encoding: "utf8" }).split("\n").filter(Boolean);
    execFileSync("bash", ["-c", `git archive ${sha} ${paths.join(" ")} | tar -x -C '${dir}'`], { cwd: ROOT, stdio: "inherit" });
    execFileSync(
      join(ROOT, "node_modules", ".bin", "esbuild"),
      ["src/node/main.ts", "--bundle", "--platform=node", "--format=esm", "--packages=external", "--target=node20.19", "--sourcemap=linked", "--outfile=dist/node/main.mjs", "--log-level=warning"],
      { cwd: dir, stdio: "inherit" },
    );
  }
  return { dir, label: `${ref} (${sha.slice(0, 7)})` };
}

function startBuild(dir: string, env: Record<string, string>, port: number, nodeArgs: string[] = []): Promise<Child> {
  const args = [...nodeArgs, ...API_NODE_ARGS.map((a) => (a === "dist/node/main.mjs" ? join(dir, "dist", "node", "main.mjs") : a))];
  return startProcess(args, { LOG_LEVEL: "info", ...env }, port);
}

export async function benchVersions(o: VersionsOptions): Promise<void> {
  const a = buildRef(o.base);
  const b = o.head ? buildRef(o.head) : (buildApi(), { dir: ROOT, label: "working tree" });
  const issuer = await startTestIssuer();
  const fake = o.workload === "ai" ? await startFakeInferenceHost(o.delayMs) : undefined;
  const kvs = [benchKvPrefix("versions-a"), benchKvPrefix("versions-b")];
  const servers: Child[] = [];
  try {
    for (const [i, build] of [a, b].entries()) {
      const databaseUrl = await freshDatabase(`api_bench_versions_${i}`);
      const env: Record<string, string> = { DATABASE_URL: databaseUrl, REDIS_URL, KV_PREFIX: kvs[i]?.prefix ?? "", OIDC_ISSUER: issuer.url, OIDC_AUDIENCE: issuer.audience };
      if (fake) Object.assign(env, { INFERENCE_URL: fake.url, INFERENCE_API: "ollama", INFERENCE_MODEL: "bench-model:7b" });
      const server = await startBuild(build.dir, env, await freePort(), i === 0 ? o.nodeArgsA : o.nodeArgsB);
      servers.push(server);
      // Users exist on the enterprise plan before the server first sees their tokens.
      await enterpriseUsers(databaseUrl, o.users);
    }
    const tokens = await Promise.all(Array.from({ length: o.users }, (_, i) => issuer.sign({ sub: `bench-user-${i}`, email: `u${i}@bench.test` }, { expiresIn: "2h" })));
    const bodies = new Map<Child, string[]>();
    for (const server of servers) {
      const ids: string[] = [];
      for (let i = 0; i < tokens.length; i += 50) {
        const batch = await Promise.all(
          tokens.slice(i, i + 50).map(async (t) => ((await (await fetch(`${server.url}/v1/auth/test`, { headers: { authorization: `Bearer ${t}` } })).json()) as { user: { id: string } }).user.id),
        );
        ids.push(...batch);
      }
      bodies.set(server, ids.map((userId) => JSON.stringify({ message: "Hey! How was your weekend hike?", context: "We matched yesterday.", language: "en", userId })));
    }

    const run = (label: string, server: Child): Promise<LoadResult> => {
      let n = 0;
      const token = () => tokens[n++ % tokens.length] as string;
      if (o.workload === "ai") {
        const list = bodies.get(server) ?? [];
        return load(label, {
          url: `${server.url}/api/v1/ai-agents/chat/response`,
          method: "POST",
          seconds: o.seconds,
          connections: o.connections,
          setupRequest: (req) => {
            const i = n++ % tokens.length;
            return { ...req, headers: { ...req.headers, "content-type": "application/json", authorization: `Bearer ${tokens[i]}` }, body: list[i] };
          },
        });
      }
      if (o.workload === "unmatched") {
        return load(label, { url: `${server.url}/scan`, seconds: o.seconds, connections: o.connections, setupRequest: (req) => ({ ...req, path: `/scan/${randomIdBody()}/wp-login.php` }) });
      }
      const path = o.workload === "auth" ? () => "/v1/auth/test" : () => `/api/payments/pay_${randomIdBody()}/status`;
      return load(label, {
        url: `${server.url}/v1/auth/test`,
        seconds: o.seconds,
        connections: o.connections,
        setupRequest: (req) => ({ ...req, path: path(), headers: { ...req.headers, authorization: `Bearer ${token()}` } }),
      });
    };

    // CPU per request barely moves with the neighbours' load, unlike req/s and latency.
    const cpuUs = new Map<LoadResult, number>();
    const measured = async (label: string, server: Child): Promise<LoadResult> => {
      const before = cpuMs(processTree(server.pid));
      const r = await run(label, server);
      cpuUs.set(r, ((cpuMs(processTree(server.pid)) - before) * 1000) / Math.max(1, r.total));
      return r;
    };
    const rows: LoadResult[] = [];
    const rps: number[] = [];
    const p99: number[] = [];
    const cpu: number[] = [];
    const [sa, sb] = servers as [Child, Child];
    // A warm-up of each, not counted: JIT, pools and caches.
    await run("warm-up A", sa);
    await run("warm-up B", sb);
    for (let round = 1; round <= o.rounds; round++) {
      // The order flips each round, so neither build always runs right after the other.
      const order: [string, Child][] = round % 2 === 1 ? [["A", sa], ["B", sb]] : [["B", sb], ["A", sa]];
      const got: Record<string, LoadResult> = {};
      for (const [name, server] of order) {
        const r = await measured(`${name} #${round}`, server);
        got[name] = r;
        rows.push(r);
      }
      const [ra, rb] = [got.A as LoadResult, got.B as LoadResult];
      rps.push(rb.rps / Math.max(1, ra.rps));
      p99.push(rb.p99 / Math.max(1, ra.p99));
      cpu.push((cpuUs.get(rb) ?? 0) / Math.max(1, cpuUs.get(ra) ?? 0));
    }
    console.log(`\nworkload ${o.workload}${o.workload === "ai" ? ` (inference answers after ${o.delayMs} ms)` : ""}; ${o.connections} connections, ${o.seconds} s per run; load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
    console.log(`A = ${a.label}${o.nodeArgsA?.length ? ` with ${o.nodeArgsA.join(" ")}` : ""}\nB = ${b.label}${o.nodeArgsB?.length ? ` with ${o.nodeArgsB.join(" ")}` : ""}\n`);
    printTable(rows);
    console.log(`\nAPI CPU per request (µs): ${rows.map((r) => `${r.label} ${Math.round(cpuUs.get(r) ?? 0)}`).join(", ")}`);
    const failed = rows.filter((r) => r.errors > 0 || (o.workload === "not-found" || o.workload === "unmatched" ? r.non2xx < r.total * 0.99 : r.non2xx > 0));
    if (failed.length > 0) console.log(`\nNOT VALID: unexpected answers in ${failed.map((r) => r.label).join(", ")}`);
    console.log(`\nB/A req/s (median of ${o.rounds}) = ${median(rps).toFixed(3)}   per round: ${rps.map((r) => r.toFixed(3)).join(" ")}`);
    console.log(`B/A p99   (median of ${o.rounds}) = ${median(p99).toFixed(3)}   per round: ${p99.map((r) => r.toFixed(3)).join(" ")}`);
    console.log(`B/A CPU per request (median of ${o.rounds}) = ${median(cpu).toFixed(3)}   per round: ${cpu.map((r) => r.toFixed(3)).join(" ")}`);
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    fake?.stop();
    await issuer.close();
    await Promise.all(kvs.map((kv) => kv.dropKeys()));
  }
}

const CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz";
function randomIdBody(): string {
  let out = "";
  for (let i = 0; i < 26; i++) out += CROCKFORD[Math.floor(Math.random() * 32)];
  return out;
}
