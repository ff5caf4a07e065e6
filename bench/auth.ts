import pg from "pg";
import { startTestIssuer } from "../test/support/issuer";
import { createIdGenerator, webRandom } from "../src/platform/ids";
import { load, median, printTable, type LoadResult } from "./lib/load";
import { cpuMs, redisPids } from "./lib/cpu";
import { startRedisCounter } from "./lib/redis-counter";
import { benchKvPrefix, REDIS_URL, freePort, freshDatabase, startApi } from "./lib/servers";

/**
 * An authenticated, rate-limited GET /v1/auth/test (JWT from a loopback issuer, real Redis,
 * real Postgres) against the unauthenticated 404 in the same run. Tokens rotate over many users,
 * all on the enterprise plan, so the limiter allows every request (a refused request is cheap and
 * would flatter the figure) while still running its script on each.
 */
export async function benchAuth(options: { seconds: number; rounds: number; connections: number; users: number }): Promise<void> {
  const issuer = await startTestIssuer();
  const redisTarget = new URL(REDIS_URL);
  const counter = await startRedisCounter({ host: redisTarget.hostname, port: Number(redisTarget.port || 6379) });
  const databaseUrl = await freshDatabase("api_bench_auth");
  const kv = benchKvPrefix("auth");
  const env = { DATABASE_URL: databaseUrl, KV_PREFIX: kv.prefix, OIDC_ISSUER: issuer.url, OIDC_AUDIENCE: issuer.audience };
  // Throughput is measured with Redis reached directly; a second server behind the counting proxy
  // counts round trips in a run of its own, so the proxy's hop never weighs on the ratio.
  const api = await startApi({ ...env, REDIS_URL }, await freePort());
  const counted = await startApi({ ...env, REDIS_URL: counter.url }, await freePort());
  try {
    const tokens = await Promise.all(
      Array.from({ length: options.users }, (_, i) => issuer.sign({ sub: `bench-user-${i}`, email: `u${i}@bench.test` }, { expiresIn: "2h" })),
    );
    await enterpriseUsers(databaseUrl, options.users);
    // First requests find the users and warm the JWKS and the caches; they are not measured.
    for (const server of [api, counted]) {
      for (let i = 0; i < tokens.length; i += 50) {
        await Promise.all(tokens.slice(i, i + 50).map((t) => fetch(`${server.url}/v1/auth/test`, { headers: { authorization: `Bearer ${t}` } })));
      }
    }
    const jwksBefore = issuer.fetches.jwks;

    const rows: LoadResult[] = [];
    const cpuPerRequest: { api: number; redis: number; client: number }[] = [];
    const ratios: number[] = [];
    for (let round = 1; round <= options.rounds; round++) {
      // The baseline carries the same rotating header (unread on a 404), so the load generator
      // builds each request the same way in both runs.
      let j = 0;
      const baseline = await load(`unauthenticated 404 #${round}`, {
        url: `${api.url}/bench-missing`,
        seconds: options.seconds,
        connections: options.connections,
        setupRequest: (req) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${tokens[j++ % tokens.length]}` } }),
      });
      let i = 0;
      const cpuBefore = [cpuMs([api.pid]), cpuMs(redisPids()), process.cpuUsage()] as const;
      const authed = await load(`GET /v1/auth/test (JWT) #${round}`, {
        url: `${api.url}/v1/auth/test`,
        seconds: options.seconds,
        connections: options.connections,
        setupRequest: (req) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${tokens[i++ % tokens.length]}` } }),
      });
      const served = Math.round(authed.rps * options.seconds);
      const client = process.cpuUsage(cpuBefore[2]);
      cpuPerRequest.push({
        api: ((cpuMs([api.pid]) - cpuBefore[0]) * 1000) / Math.max(1, authed.total),
        redis: ((cpuMs(redisPids()) - cpuBefore[1]) * 1000) / Math.max(1, authed.total),
        client: (client.user + client.system) / Math.max(1, authed.total),
      });
      rows.push(baseline, authed);
      ratios.push(authed.rps / baseline.rps);
      if (authed.non2xx > 0) console.warn(`warning: ${authed.non2xx} non-2xx answers in round ${round} (of ~${served})`);
    }
    const callsBefore = counter.commands();
    let k = 0;
    const countedRun = await load("GET /v1/auth/test via the counting proxy", {
      url: `${counted.url}/v1/auth/test`,
      seconds: Math.min(3, options.seconds),
      connections: options.connections,
      setupRequest: (req) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${tokens[k++ % tokens.length]}` } }),
    });
    const callsPerRequest = (counter.commands() - callsBefore) / Math.max(1, countedRun.total);
    printTable(rows);
    const ratio = median(ratios);
    console.log(`\nauthenticated/unauthenticated req/s ratio (median of ${options.rounds}) = ${ratio.toFixed(2)}  (target >= 0.5) ${ratio >= 0.5 ? "PASS" : "MISS"}`);
    console.log(`Redis commands sent per authenticated request (counted on the wire, ${countedRun.total} requests) = ${callsPerRequest.toFixed(3)}  (target: exactly 1)`);
    const mid = cpuPerRequest[Math.floor(cpuPerRequest.length / 2)];
    if (mid) console.log(`CPU per authenticated request (a middle round): API ${mid.api.toFixed(0)} µs, Redis ${mid.redis.toFixed(0)} µs, load generator ${mid.client.toFixed(0)} µs`);
    console.log(`JWKS fetches during measured runs (warm JWKS) = ${issuer.fetches.jwks - jwksBefore}  (target: 0)`);

    const floodBefore = issuer.fetches.jwks;
    const bogus = await Promise.all(Array.from({ length: 300 }, (_, n) => issuer.sign({ sub: `flood-${n}` }, { kid: `unknown-${n}` })));
    const statuses = await Promise.all(bogus.map((t) => fetch(`${api.url}/v1/auth/test`, { headers: { authorization: `Bearer ${t}` } }).then((r) => r.status)));
    console.log(
      `unknown-kid flood: ${bogus.length} tokens → ${statuses.filter((s) => s === 401).length}× 401, JWKS fetches = ${issuer.fetches.jwks - floodBefore}  (target: <= 1 per 30 s)`,
    );
  } finally {
    await Promise.all([api.stop(), counted.stop()]);
    await counter.close();
    await issuer.close();
    await kv.dropKeys();
  }
}

/** Users bench-user-0… with enterprise subscriptions, made before the server first sees them. */
export async function enterpriseUsers(databaseUrl: string, count: number): Promise<void> {
  const ids = createIdGenerator({ now: () => Date.now() }, webRandom);
  const userIds = Array.from({ length: count }, () => ids.next("usr"));
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `insert into users (id, subject, email, role, created_at)
       select u, 'bench-user-' || (n - 1), 'u' || (n - 1) || '@bench.test', 'user', now() from unnest($1::text[]) with ordinality as t(u, n)`,
      [userIds],
    );
    await client.query(
      `insert into subscriptions (id, user_id, plan_id, current_period_start, current_period_end, created_at, updated_at)
       select 'sub_' || u, u, 'enterprise', now(), now() + interval '30 days', now(), now() from unnest($1::text[]) u`,
      [userIds],
    );
  } finally {
    await client.end();
  }
}
