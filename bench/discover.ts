import { rmSync } from "node:fs";
import { join } from "node:path";
import { startTestIssuer } from "../test/support/issuer";
import { closedLoop, stats, type Stats } from "./lib/closed-loop";
import { keepAliveGet } from "./lib/http-client";
import { seedProfiles } from "./lib/discover-seed";
import { cpuDelta, cpuMs, cpuMsByPid, postgresBackends } from "./lib/cpu";
import { API_NODE_ARGS, benchKvPrefix, buildRef, PG_ADMIN_URL, REDIS_URL, freePort, freshDatabase, signInAll, startApi, startProcess, type Child } from "./lib/servers";

/**
 * GET /api/v1/profiles/discover over 100,000 seeded profiles (8 cities in 4 countries, realistic
 * interests and wishes), driven by `connections` concurrent clients that each swipe through a
 * session of `pages` pages (first page builds the session snapshot, later pages read it), then
 * move on to the next of `users` bench users (all on enterprise, so the rate limit stays out of
 * the way). GET /health runs with the same client loop in the same run for the ratio.
 * Latencies are measured per request by the client loop (autocannon has no p95).
 */
export async function benchDiscover(options: {
  seconds: number;
  connections: number;
  users: number;
  profiles: number;
  pages: number;
  limit: number;
  /** A git ref whose build runs beside the working tree's on the same data, alternating with it. */
  baseline?: string;
  rounds: number;
}): Promise<void> {
  const started = Date.now();
  const issuer = await startTestIssuer();
  const baselineBuild = options.baseline ? buildRef(options.baseline) : null;
  const databaseUrl = await freshDatabase("api_bench_discover");
  const kv = benchKvPrefix("discover");
  const env = { DATABASE_URL: databaseUrl, REDIS_URL, KV_PREFIX: kv.prefix, OIDC_ISSUER: issuer.url, OIDC_AUDIENCE: issuer.audience };
  const api = await startApi(env, await freePort());
  const sides: { name: string; api: Child }[] = [{ name: "working tree", api }];
  try {
    if (baselineBuild) {
      const args = API_NODE_ARGS.map((a) => (a.endsWith("main.mjs") ? join(baselineBuild.dir, a) : a));
      sides.unshift({ name: `baseline ${baselineBuild.name}`, api: await startProcess(args, { LOG_LEVEL: "info", ...env }, await freePort()) });
    }
    const tokens = await Promise.all(Array.from({ length: options.users }, (_, i) => issuer.sign({ sub: `bench-discover-${i}`, email: `d${i}@bench.test` }, { expiresIn: "2h" })));
    const ids = await signInAll(api.url, tokens);
    const seedStarted = Date.now();
    const phases = await seedProfiles(databaseUrl, options.profiles, ids);
    console.log(
      `setup: ${options.profiles} seeded profiles + ${ids.length} bench users with profiles (enterprise); seeding ${((Date.now() - seedStarted) / 1000).toFixed(1)} s (${phases}), setup ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );

    // Warm the JIT, the pools and the plan cache; not measured.
    for (const side of sides) await drive(side.api.url, tokens, { ...options, seconds: 3 });
    console.log(`\n${options.connections} concurrent clients, ${options.seconds} s per run, ${options.users} users rotated, sessions of ${options.pages} pages × ${options.limit} cards`);
    const results = new Map<string, Measured[]>(sides.map((s) => [s.name, []]));
    // A, B, B, A, …: neither build always runs first after the other.
    for (let round = 0; round < options.rounds; round++) {
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        const m = await measure(side.api, tokens, options);
        results.get(side.name)?.push(m);
        report(`${side.name}, round ${round + 1}`, m, options);
      }
    }
    if (baselineBuild) {
      const [base, head] = sides.map((s) => results.get(s.name) ?? []) as [Measured[], Measured[]];
      const ratio = (f: (m: Measured) => number) => head.map((m, i) => (f(m) / f(base[i] as Measured)).toFixed(2)).join(", ");
      console.log(`\nworking tree / baseline, per round: Postgres CPU per request ${ratio((m) => m.dbMsPerRequest)}; API CPU per request ${ratio((m) => m.apiMsPerRequest)}; ` +
        `feed p95 ${ratio((m) => m.feed.p95)}; feed req/s relative to /health ${ratio((m) => m.feed.count / Math.max(1, m.health.count))}`);
    }
    console.log(`total time ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    for (const side of sides) await side.api.stop();
    await issuer.close();
    await kv.dropKeys();
    if (baselineBuild) rmSync(baselineBuild.dir, { recursive: true, force: true });
  }
}

interface Measured {
  health: Stats;
  feed: Stats;
  first: Stats;
  next: Stats;
  cards: number;
  apiMsPerRequest: number;
  dbMsPerRequest: number;
  clientMsPerRequest: number;
  failures: Map<string, number>;
}

/** GET /health, then the feed, with the CPU of the API process and its Postgres backends around the feed run. */
async function measure(api: Child, tokens: string[], options: { seconds: number; connections: number; pages: number; limit: number }): Promise<Measured> {
  const get = keepAliveGet(options.connections);
  const health = await closedLoop(options.seconds, options.connections, async () => {
    const res = await get(`${api.url}/health`);
    return { ok: res.status === 200, kind: "health" };
  });
  const backends = await postgresBackends(PG_ADMIN_URL, "api_bench_discover");
  const dbBefore = cpuMsByPid(backends);
  const apiBefore = cpuMs([api.pid]);
  const clientBefore = process.cpuUsage();
  const feed = await drive(api.url, tokens, options);
  const clientUsage = process.cpuUsage(clientBefore);
  const apiCpu = cpuMs([api.pid]) - apiBefore;
  const dbCpu = cpuDelta(dbBefore, cpuMsByPid(backends));
  const n = Math.max(1, feed.all.length);
  return {
    health: stats(health.all),
    feed: stats(feed.all),
    first: stats(feed.byKind.get("first") ?? []),
    next: stats(feed.byKind.get("next") ?? []),
    cards: feed.cards,
    apiMsPerRequest: apiCpu / n,
    dbMsPerRequest: dbCpu / n,
    clientMsPerRequest: (clientUsage.user + clientUsage.system) / 1000 / n,
    failures: feed.failures,
  };
}

function report(title: string, m: Measured, options: { seconds: number }): void {
  const line = (label: string, s: Stats) =>
    console.log(
      label.padEnd(36),
      String(Math.round(s.count / options.seconds)).padStart(8),
      s.p50.toFixed(1).padStart(8),
      s.p95.toFixed(1).padStart(8),
      s.p99.toFixed(1).padStart(8),
      String(s.failed).padStart(7),
    );
  console.log(`\n${title}`);
  console.log("label".padEnd(36), "req/s".padStart(8), "p50 ms".padStart(8), "p95 ms".padStart(8), "p99 ms".padStart(8), "failed".padStart(7));
  line("GET /health", m.health);
  line("GET /profiles/discover (all pages)", m.feed);
  line("  first page (builds the session)", m.first);
  line("  later pages (cursor)", m.next);
  console.log(`discover/health req/s ratio = ${(m.feed.count / Math.max(1, m.health.count)).toFixed(3)}; p95 ratio = ${(m.feed.p95 / Math.max(0.001, m.health.p95)).toFixed(2)}; cards served per second = ${Math.round(m.cards / options.seconds)}`);
  console.log(
    `CPU per feed request (steadier than latency on a busy machine): API process ${m.apiMsPerRequest.toFixed(2)} ms + Postgres backends ${m.dbMsPerRequest.toFixed(2)} ms = ${(m.apiMsPerRequest + m.dbMsPerRequest).toFixed(2)} ms (target Postgres ≤ 1.5 ms: ${m.dbMsPerRequest <= 1.5 ? "PASS" : "MISS"}); the load generator (this process) ${m.clientMsPerRequest.toFixed(2)} ms`,
  );
  console.log(
    `discover p95 = ${m.feed.p95.toFixed(1)} ms (target < 50 ms) ${m.feed.p95 < 50 ? "PASS" : "MISS"}; first page p95 = ${m.first.p95.toFixed(1)} ms (target < 80 ms) ${m.first.p95 < 80 ? "PASS" : "MISS"}`,
  );
  if (m.feed.failed > 0) console.log(`failures: ${[...m.failures].map(([k, v]) => `${k}×${v}`).join(", ")}`);
}

/** Each client swipes through sessions: a first page, then `pages - 1` cursor pages, then the next user. */
async function drive(url: string, tokens: string[], options: { seconds: number; connections: number; pages: number; limit: number }) {
  const get = keepAliveGet(options.connections);
  let nextUser = 0;
  const state = Array.from({ length: options.connections }, () => ({ token: "", cursor: null as string | null, page: 0 }));
  let cards = 0;
  const failures = new Map<string, number>();
  const result = await closedLoop(options.seconds, options.connections, async (worker) => {
    const s = state[worker] as (typeof state)[number];
    if (s.cursor === null || s.page >= options.pages) {
      s.token = tokens[nextUser++ % tokens.length] as string;
      s.cursor = null;
      s.page = 0;
    }
    const kind = s.cursor === null ? "first" : "next";
    const query = `limit=${options.limit}${s.cursor ? `&cursor=${encodeURIComponent(s.cursor)}` : ""}`;
    const res = await get(`${url}/api/v1/profiles/discover?${query}`, { authorization: `Bearer ${s.token}` });
    const text = res.text;
    if (res.status !== 200) {
      failures.set(String(res.status), (failures.get(String(res.status)) ?? 0) + 1);
      s.cursor = null;
      return { ok: false, kind };
    }
    const body = JSON.parse(text) as { profiles: unknown[]; nextCursor: string | null };
    cards += body.profiles.length;
    s.cursor = body.nextCursor;
    s.page++;
    return { ok: true, kind };
  });
  return { ...result, cards, failures };
}
