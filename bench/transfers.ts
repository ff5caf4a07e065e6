import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { startTestIssuer } from "../test/support/issuer";
import { withPgClient } from "../test/support/pg";
import { cpuMs, postgresBackends } from "./lib/cpu";
import { load, median, printTable, type LoadResult } from "./lib/load";
import { API_NODE_ARGS, PG_ADMIN_URL, REDIS_URL, ROOT, benchKvPrefix, buildApi, buildRef, freePort, freshDatabase, signInAll, startProcess, type Build, type Child } from "./lib/servers";
import { fundThroughLedger } from "./wallet";

const FUNDING = 1_000_000;


interface Side {
  build: Build;
  api: Child;
  database: string;
  tokens: string[];
  ids: string[];
}

/**
 * Transfers over HTTP through two builds of the API, alternating A/B rounds on the same machine:
 * the working tree (or `--candidate <ref>`) and a git ref (`--baseline`), each server on a database of its own over TCP,
 * with Redis for rate limits, and JWT-authenticated clients sending a mix of keyed (Idempotency-Key)
 * and unkeyed transfers between random people. Prints each run, the CPU each build spends per
 * transfer (API process and its Postgres backends), the candidate/baseline ratio per pair, and the
 * ledger's state afterwards.
 */
export async function benchTransfers(options: { baseline: string; candidate?: string; seconds: number; rounds: number; connections: number[]; users: number; keyedShare: number; pool?: number }): Promise<void> {
  const started = Date.now();
  let candidate: Build = { name: "working tree", dir: ROOT };
  if (options.candidate) candidate = buildRef(options.candidate);
  else buildApi();
  const baseline = buildRef(options.baseline);
  const issuer = await startTestIssuer();
  const kv = benchKvPrefix("transfers");
  const sides: Side[] = [];
  try {
    for (const [i, build] of [baseline, candidate].entries()) sides.push(await startSide(build, `api_bench_transfers_${i}`, kv.prefix + `${i}:`, issuer, options.users, options.pool));
    const [base, cand] = sides as [Side, Side];
    console.log(`setup: ${options.users} people per build funded with ${FUNDING} coins, on enterprise; ${((Date.now() - started) / 1000).toFixed(1)} s`);

    let keyCounter = 0;
    const run = (side: Side, label: string, connections: number, seconds: number) =>
      load(label, {
        url: `${side.api.url}/api/v1/wallet/transfer`,
        method: "POST",
        seconds,
        connections,
        headers: { "content-type": "application/json" },
        setupRequest: (req) => {
          const from = Math.floor(Math.random() * options.users);
          const to = (from + 1 + Math.floor(Math.random() * (options.users - 1))) % options.users;
          const keyed = Math.random() < options.keyedShare;
          return {
            ...req,
            headers: { ...req.headers, authorization: `Bearer ${side.tokens[from]}`, ...(keyed ? { "idempotency-key": `bench-${started}-${keyCounter++}` } : {}) },
            body: JSON.stringify({ toUserId: side.ids[to], amount: 1 + Math.floor(Math.random() * 5) }),
          };
        },
      });
    const measured = async (side: Side, label: string, connections: number) => {
      await vacuum(side.database);
      const pids = [side.api.pid, ...(await postgresBackends(PG_ADMIN_URL, side.database))];
      const [allBefore, apiBefore] = [cpuMs(pids), cpuMs([side.api.pid])];
      const result = await run(side, label, connections, options.seconds);
      const api = cpuMs([side.api.pid]) - apiBefore;
      const db = cpuMs(pids) - allBefore - api;
      return { result, apiMs: api / Math.max(1, result.total), dbMs: db / Math.max(1, result.total) };
    };

    // Warm the JIT and both pools; not measured.
    for (const side of sides) await run(side, "warm-up", options.connections[0] ?? 16, 3);

    const summary: string[] = [];
    for (const connections of options.connections) {
      const rows: LoadResult[] = [];
      const ratios: number[] = [];
      const cpu: string[] = [];
      for (let round = 1; round <= options.rounds; round++) {
        // Alternate which build goes first, so neither always follows the other's vacuum debt.
        const order = round % 2 === 1 ? [base, cand] : [cand, base];
        const out = new Map<Side, Awaited<ReturnType<typeof measured>>>();
        for (const side of order) out.set(side, await measured(side, `${side === base ? "baseline" : "candidate"} #${round} (${connections} conn)`, connections));
        const b = out.get(base)!;
        const c = out.get(cand)!;
        rows.push(b.result, c.result);
        ratios.push(c.result.rps / Math.max(1, b.result.rps));
        cpu.push(`#${round}: baseline ${b.apiMs.toFixed(3)} + ${b.dbMs.toFixed(3)} ms, candidate ${c.apiMs.toFixed(3)} + ${c.dbMs.toFixed(3)} ms`);
      }
      console.log(`\n${connections} connections, ${options.seconds} s per run, ${Math.round(options.keyedShare * 100)} % of transfers with an Idempotency-Key, database pool ${options.pool ?? "default"}`);
      printTable(rows);
      console.log(`CPU per transfer (API process + Postgres backends): ${cpu.join("; ")}`);
      const line = `${connections} connections: candidate/baseline transfers per second ${ratios.map((r) => r.toFixed(2)).join(", ")} (median ${median(ratios).toFixed(2)})`;
      console.log(line);
      summary.push(line);
    }

    console.log(`\nbaseline = ${baseline.name}, candidate = ${candidate.name}`);
    for (const line of summary) console.log(line);
    for (const side of sides) {
      const check = await ledgerCheck(side.database);
      console.log(`ledger of the ${side === base ? "baseline" : "candidate"}: ${check.transfers} transfers, sum of balances ${check.total} (must be 0), accounts disagreeing with their postings ${check.mismatched} (must be 0), negative wallets ${check.negative} (must be 0)`);
    }
    console.log(`total time ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    for (const side of sides) await side.api.stop();
    await issuer.close();
    await kv.dropKeys();
    for (const build of [baseline, candidate]) if (build.dir !== ROOT) rmSync(build.dir, { recursive: true, force: true });
  }
}


async function startSide(build: Build, database: string, kvPrefix: string, issuer: Awaited<ReturnType<typeof startTestIssuer>>, users: number, pool?: number): Promise<Side> {
  const url = await freshDatabase(database);
  const args = API_NODE_ARGS.map((a) => (a.endsWith("main.mjs") ? join(build.dir, a) : a));
  const api = await startProcess(args, { LOG_LEVEL: "warn", DATABASE_URL: url, REDIS_URL, KV_PREFIX: kvPrefix, OIDC_ISSUER: issuer.url, OIDC_AUDIENCE: issuer.audience, ...(pool ? { DATABASE_POOL_MAX: String(pool) } : {}) }, await freePort());
  const tokens = await Promise.all(Array.from({ length: users }, (_, i) => issuer.sign({ sub: `bench-transfers-${i}`, email: `t${i}@bench.test` }, { expiresIn: "2h" })));
  const ids = await signInAll(api.url, tokens);
  await fundThroughLedger(url, ids, FUNDING);
  // Everyone on enterprise (paid from the wallet), so the plan's rate limits stay out of the way.
  for (let i = 0; i < tokens.length; i += 50) {
    await Promise.all(
      tokens.slice(i, i + 50).map(async (t) => {
        const res = await fetch(`${api.url}/api/v1/subscriptions`, { method: "POST", headers: { authorization: `Bearer ${t}`, "content-type": "application/json" }, body: JSON.stringify({ planId: "enterprise" }) });
        if (res.status !== 201) throw new Error(`subscribing answered ${res.status}: ${await res.text()}`);
      }),
    );
  }
  return { build, api, database, tokens, ids };
}

/** What autovacuum would do (it is off on this machine's Postgres), before each measured run. */
async function vacuum(database: string): Promise<void> {
  await withPgClient(dbUrl(database), (c) => c.query("vacuum analyze ledger_accounts, ledger_transactions, ledger_postings, idempotency_keys"));
}

function dbUrl(database: string): string {
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

async function ledgerCheck(database: string): Promise<{ transfers: number; total: number; mismatched: number; negative: number }> {
  return withPgClient(dbUrl(database), async (c) => {
    const { rows } = await c.query<{ transfers: string; total: string; mismatched: string; negative: string }>(
      `select
         (select count(*) from ledger_transactions where type = 'transfer')::text as transfers,
         (select sum(balance) from ledger_accounts)::text as total,
         (select count(*) from ledger_accounts a where a.balance <> coalesce((select sum(p.amount) from ledger_postings p where p.account_id = a.id), 0))::text as mismatched,
         (select count(*) from ledger_accounts where kind = 'wallet' and balance < 0)::text as negative`,
    );
    const r = rows[0];
    return { transfers: Number(r?.transfers), total: Number(r?.total), mismatched: Number(r?.mismatched), negative: Number(r?.negative) };
  });
}
