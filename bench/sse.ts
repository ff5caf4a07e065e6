import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";
import { Redis } from "ioredis";
import pg from "pg";
import { startTestIssuer } from "../test/support/issuer";
import { benchKvPrefix, REDIS_URL, freePort, freshDatabase, raiseNofileScript, startApi } from "./lib/servers";

/** Open files for the server and for this process: 10,000 sockets each, with room to spare. */
const NOFILE = 65_536;
const REEXEC_FLAG = "BENCH_SSE_NOFILE_RAISED";

/**
 * N open `GET /api/v1/matches/events` streams on one Node API process (real Postgres, real Redis
 * pub/sub, JWTs from a loopback issuer), one event delivered to each: server RSS per open stream,
 * and the time from storing + notifying an event to the client reading it.
 *
 * The bench raises its own open-files limit by re-running itself under `bash -c "ulimit -n …"`
 * (we run as root, so the hard limit can be raised), and starts the API the same way.
 */
export async function benchSse(options: { streams: number; batch: number; timeoutSeconds: number }): Promise<void> {
  if (currentNofile() < NOFILE && process.env[REEXEC_FLAG] !== "1") return reexecWithNofile();
  const { streams, batch } = options;
  const started = Date.now();
  const log = (msg: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${msg}`);
  log(`bench process open-files limit: ${currentNofile()}`);

  const issuer = await startTestIssuer();
  const databaseUrl = await freshDatabase("api_bench_sse");
  const kv = benchKvPrefix("sse");
  const prefix = kv.prefix;
  const api = await startApi(
    { DATABASE_URL: databaseUrl, REDIS_URL, KV_PREFIX: prefix, OIDC_ISSUER: issuer.url, OIDC_AUDIENCE: issuer.audience },
    await freePort(),
    { nofile: NOFILE },
  );
  const target = new URL(api.url);
  const redis = new Redis(REDIS_URL);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const open: SseStream[] = [];
  try {
    log(`API pid ${api.pid}, open-files limit ${serverNofile(api.pid)}, KV_PREFIX ${prefix}`);
    const sign = (sub: string) => issuer.sign({ sub, email: `${sub}@bench.test` }, { alg: "EdDSA", expiresIn: "2h" });

    // Warm-up: JWKS, JIT, the pg pool and the Redis subscriber connection; then the baseline.
    const warmTokens = await Promise.all(Array.from({ length: 200 }, (_, i) => sign(`bench-sse-warm-${i}`)));
    for (let i = 0; i < warmTokens.length; i += 50) {
      const opened = await Promise.all(warmTokens.slice(i, i + 50).map((t) => openStream(target, t)));
      for (const s of opened) s.close();
    }
    for (let i = 0; i < 200; i++) await fetch(`${api.url}/health`).then((r) => r.arrayBuffer());
    await sleep(3_000);
    const rssBaseline = rssKb(api.pid);
    log(`warm-up done; server RSS baseline (0 streams) = ${mb(rssBaseline)}`);

    // Open the streams in batches; each is open once the first chunk (": connected") arrived.
    const tokens = await Promise.all(Array.from({ length: streams }, (_, i) => sign(`bench-sse-${i}`)));
    const openStarted = Date.now();
    let failures = 0;
    for (let i = 0; i < streams; i += batch) {
      const results = await Promise.allSettled(tokens.slice(i, i + batch).map((t, j) => openStream(target, t, i + j)));
      for (const r of results) {
        if (r.status === "fulfilled") open.push(r.value);
        else if (failures++ < 5) log(`open failed: ${String(r.reason)}`);
      }
    }
    const openMs = Date.now() - openStarted;
    log(`opened ${open.length}/${streams} streams in ${(openMs / 1000).toFixed(1)} s (${batch} concurrent, ${failures} failed)`);

    await sleep(5_000);
    const rssOpen = rssKb(api.pid);
    const channels = await subscribedChannels(redis, prefix);
    const perStream = (rssOpen - rssBaseline) / Math.max(1, open.length);
    log(`idle: server RSS = ${mb(rssOpen)}; Redis channels subscribed by the API = ${channels}`);

    // One event per stream's user: rows straight into the outbox, then the same notification the
    // app publishes after its commit (`${KV_PREFIX}matching:events:<userId>` → "1"). A chunk's
    // send time is taken before its insert, so it counts the insert as well.
    const { rows } = await db.query<{ id: string; subject: string }>(`select id, subject from users where subject like 'bench-sse-%' and subject not like 'bench-sse-warm-%'`);
    const idOf = new Map(rows.map((r) => [r.subject, r.id]));
    const byUser = new Map<string, SseStream>();
    for (const s of open) {
      const id = idOf.get(`bench-sse-${s.index}`);
      if (id) byUser.set(id, s);
    }
    const userIds = [...byUser.keys()];
    const chunk = 1_000;
    const sendStarted = Date.now();
    for (let i = 0; i < userIds.length; i += chunk) {
      const part = userIds.slice(i, i + chunk);
      const sentAt = performance.now();
      for (const id of part) (byUser.get(id) as SseStream).sentAt = sentAt;
      const others = part.map((_, j) => userIds[(i + j + 1) % userIds.length] as string);
      await db.query(
        `insert into events (user_id, type, data, created_at)
         select u, 'wink.received', jsonb_build_object('userId', o, 'winkId', 'bench'), now() from unnest($1::text[], $2::text[]) as t(u, o)`,
        [part, others],
      );
      const pipeline = redis.pipeline();
      for (const id of part) pipeline.publish(`${prefix}matching:events:${id}`, "1");
      await pipeline.exec();
    }
    log(`stored and notified ${userIds.length} events in ${Date.now() - sendStarted} ms`);

    const deadline = Date.now() + options.timeoutSeconds * 1_000;
    const delivered = () => open.filter((s) => s.receivedAt !== undefined).length;
    while (delivered() < userIds.length && Date.now() < deadline) await sleep(100);
    const latencies = open.filter((s) => s.receivedAt !== undefined && s.sentAt !== undefined).map((s) => (s.receivedAt as number) - (s.sentAt as number));
    latencies.sort((a, b) => a - b);
    const wrongOrExtra = open.filter((s) => s.events > 1).length;
    const dropped = open.filter((s) => s.ended).length;

    // Close everything; the server must let go of the streams and stay healthy.
    for (const s of open) s.close();
    await sleep(5_000);
    const rssClosed = rssKb(api.pid);
    const channelsAfter = await subscribedChannels(redis, prefix);
    const health = await fetch(`${api.url}/health`).then(async (r) => `${r.status} ${await r.text()}`);

    const p = (q: number): number => latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)] ?? NaN;
    const ms = (v: number | undefined) => `${(v ?? NaN).toFixed(0)} ms`;
    console.log("\n== SSE: open event streams on one Node API process ==");
    console.log(`streams opened                    ${open.length} / ${streams}  (failed ${failures}, ended early by the server ${dropped})`);
    console.log(`open duration                     ${(openMs / 1000).toFixed(1)} s  (${batch} concurrent; includes creating each user on its first request)`);
    console.log(`server RSS baseline / open        ${mb(rssBaseline)} / ${mb(rssOpen)}`);
    console.log(`memory per stream                 ${perStream.toFixed(1)} KB  (target <= 40) ${perStream <= 40 ? "PASS" : "MISS"}`);
    console.log(`delivered                         ${latencies.length} / ${userIds.length} within ${options.timeoutSeconds} s  (streams with >1 event: ${wrongOrExtra})`);
    console.log(`delivery p50 / p95 / p99 / max    ${ms(p(0.5))} / ${ms(p(0.95))} / ${ms(p(0.99))} / ${ms(latencies.at(-1))}  (target p99 <= 1000 ms) ${p(0.99) <= 1000 && latencies.length === streams ? "PASS" : "MISS"}`);
    console.log(`after closing all streams         RSS ${mb(rssClosed)}, Redis channels ${channels} → ${channelsAfter}, GET /health → ${health}`);
    console.log(`total bench time                  ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    for (const s of open) s.close();
    await db.end().catch(() => {});
    redis.disconnect();
    await api.stop();
    await issuer.close();
    await kv.dropKeys();
  }
}

interface SseStream {
  index: number;
  sentAt?: number;
  receivedAt?: number;
  events: number;
  ended: boolean;
  close(): void;
}

/**
 * One stream on its own socket (no keep-alive agent). Resolves once the first chunk arrives;
 * afterwards it only looks for complete events (blank-line separated) carrying an `id:`.
 */
function openStream(target: URL, token: string, index = -1): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const stream: SseStream = { index, events: 0, ended: false, close: () => req.destroy() };
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: "/api/v1/matches/events",
        agent: false,
        headers: { accept: "text/event-stream", authorization: `Bearer ${token}` },
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`status ${res.statusCode}`));
          return;
        }
        res.setEncoding("utf8");
        let buf = "";
        let first = true;
        res.on("data", (chunk: string) => {
          if (first) {
            first = false;
            req.setTimeout(0);
            resolve(stream);
          }
          buf += chunk;
          let end: number;
          while ((end = buf.indexOf("\n\n")) >= 0) {
            const block = buf.slice(0, end);
            buf = buf.slice(end + 2);
            if (/(^|\n)id:/.test(block)) {
              stream.events += 1;
              stream.receivedAt ??= performance.now();
            }
          }
        });
        res.on("end", () => (stream.ended = true));
        res.on("error", () => {});
      },
    );
    req.on("error", (err) => {
      stream.ended = true;
      reject(err);
    });
    req.setTimeout(30_000, () => req.destroy(new Error("no answer within 30 s")));
    req.end();
  });
}

async function subscribedChannels(redis: Redis, prefix: string): Promise<number> {
  const list = (await redis.call("PUBSUB", "CHANNELS", `${prefix}matching:events:*`)) as string[];
  return list.length;
}

function rssKb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]);
}

function serverNofile(pid: number): string {
  const line = readFileSync(`/proc/${pid}/limits`, "utf8").split("\n").find((l) => l.startsWith("Max open files"));
  return line ? line.replace(/\s+/g, " ").replace("Max open files ", "") : "?";
}

function currentNofile(): number {
  return Number(spawnSync("bash", ["-c", "ulimit -n"], { encoding: "utf8" }).stdout.trim()) || 0;
}

const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MB`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs this same command again under a raised open-files limit and exits with its status. */
function reexecWithNofile(): Promise<void> {
  console.log(`raising the open-files limit (target ${NOFILE}; else up to the hard limit) and re-running the bench`);
  const child = spawn("bash", ["-c", raiseNofileScript(NOFILE), process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...process.env, [REEXEC_FLAG]: "1" },
  });
  return new Promise(() => child.on("exit", (code) => process.exit(code ?? 1)));
}
