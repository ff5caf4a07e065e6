import { startTestIssuer } from "../test/support/issuer";
import { load, median, printTable, type LoadResult } from "./lib/load";
import { startRedisCounter } from "./lib/redis-counter";
import { REDIS_URL, freePort, freshDatabase, startApi } from "./lib/servers";

/**
 * An authenticated, rate-limited GET /v1/auth/test (JWT from a loopback issuer, real Redis,
 * real Postgres) against the unauthenticated 404 in the same run. Tokens rotate over many users
 * so the limiter allows every request, as it would for real traffic.
 */
export async function benchAuth(options: { seconds: number; rounds: number; connections: number; users: number }): Promise<void> {
  const issuer = await startTestIssuer();
  const redisTarget = new URL(REDIS_URL);
  const counter = await startRedisCounter({ host: redisTarget.hostname, port: Number(redisTarget.port || 6379) });
  const databaseUrl = await freshDatabase("api_bench_auth");
  const api = await startApi(
    { DATABASE_URL: databaseUrl, REDIS_URL: counter.url, KV_PREFIX: `bench:${Date.now()}:`, OIDC_ISSUER: issuer.url, OIDC_AUDIENCE: issuer.audience },
    await freePort(),
  );
  try {
    const tokens = await Promise.all(
      Array.from({ length: options.users }, (_, i) => issuer.sign({ sub: `bench-user-${i}`, email: `u${i}@bench.test` }, { expiresIn: "2h" })),
    );
    // First requests create the users and warm the JWKS; they are not measured.
    for (let i = 0; i < tokens.length; i += 50) {
      await Promise.all(tokens.slice(i, i + 50).map((t) => fetch(`${api.url}/v1/auth/test`, { headers: { authorization: `Bearer ${t}` } })));
    }
    const jwksBefore = issuer.fetches.jwks;

    const rows: LoadResult[] = [];
    const ratios: number[] = [];
    let callsPerRequest = 0;
    for (let round = 1; round <= options.rounds; round++) {
      const baseline = await load(`unauthenticated 404 #${round}`, { url: `${api.url}/bench-missing`, seconds: options.seconds, connections: options.connections });
      const callsBefore = counter.commands();
      let i = 0;
      const authed = await load(`GET /v1/auth/test (JWT) #${round}`, {
        url: `${api.url}/v1/auth/test`,
        seconds: options.seconds,
        connections: options.connections,
        setupRequest: (req) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${tokens[i++ % tokens.length]}` } }),
      });
      const calls = counter.commands() - callsBefore;
      const served = Math.round(authed.rps * options.seconds);
      callsPerRequest = calls / Math.max(1, authed.total);
      rows.push(baseline, authed);
      ratios.push(authed.rps / baseline.rps);
      if (authed.non2xx > 0) console.warn(`warning: ${authed.non2xx} non-2xx answers in round ${round} (of ~${served})`);
    }
    printTable(rows);
    const ratio = median(ratios);
    console.log(`\nauthenticated/unauthenticated req/s ratio (median of ${options.rounds}) = ${ratio.toFixed(2)}  (target >= 0.5) ${ratio >= 0.5 ? "PASS" : "MISS"}`);
    console.log(`Redis commands sent per authenticated request (last round, counted on the wire) = ${callsPerRequest.toFixed(3)}  (target: exactly 1)`);
    console.log(`JWKS fetches during measured runs (warm JWKS) = ${issuer.fetches.jwks - jwksBefore}  (target: 0)`);

    const floodBefore = issuer.fetches.jwks;
    const bogus = await Promise.all(Array.from({ length: 300 }, (_, n) => issuer.sign({ sub: `flood-${n}` }, { kid: `unknown-${n}` })));
    const statuses = await Promise.all(bogus.map((t) => fetch(`${api.url}/v1/auth/test`, { headers: { authorization: `Bearer ${t}` } }).then((r) => r.status)));
    console.log(
      `unknown-kid flood: ${bogus.length} tokens → ${statuses.filter((s) => s === 401).length}× 401, JWKS fetches = ${issuer.fetches.jwks - floodBefore}  (target: <= 1 per 30 s)`,
    );
  } finally {
    await api.stop();
    await counter.close();
    await issuer.close();
  }
}
