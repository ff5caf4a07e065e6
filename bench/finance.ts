import pg from "pg";
import { startTestIssuer } from "../test/support/issuer";
import { closedLoop, stats, type Stats } from "./lib/closed-loop";
import { cpuDelta, cpuMs, cpuMsByPid, postgresBackends } from "./lib/cpu";
import { keepAliveGet } from "./lib/http-client";
import { benchKvPrefix, freePort, freshDatabase, PG_ADMIN_URL, REDIS_URL, signInAll, startApi, type Child } from "./lib/servers";

const DB_NAME = "api_bench_finance";
/** Admins the calls rotate over: each has the standard tier's 100 requests a minute. */
const ADMINS = 40;

/**
 * GET /api/admin/finance/metrics over a year of seeded history: `postings` ledger postings (two per
 * transaction: payment credits, subscriptions, awards and transfers between members) and `payments`
 * payments over four providers, one per member. Each round drives GET /health with the same client
 * loop first (the baseline), then the default window (the last 30 days), then the widest (366 days).
 */
export async function benchFinance(options: { seconds: number; rounds: number; connections: number; postings: number; payments: number }): Promise<void> {
  const started = Date.now();
  const issuer = await startTestIssuer();
  const databaseUrl = await freshDatabase(DB_NAME);
  const kv = benchKvPrefix("finance");
  let api: Child | undefined;
  try {
    api = await startApi({ DATABASE_URL: databaseUrl, REDIS_URL, KV_PREFIX: kv.prefix, OIDC_ISSUER: issuer.url, OIDC_AUDIENCE: issuer.audience }, await freePort());
    const tokens = await Promise.all(Array.from({ length: ADMINS }, (_, i) => issuer.sign({ sub: `bench-finance-admin-${i}`, email: `fa${i}@bench.test`, roles: ["admin"] }, { expiresIn: "2h" })));
    await signInAll(api.url, tokens);
    const seedStarted = Date.now();
    const seeded = await seed(databaseUrl, options.postings, options.payments);
    console.log(
      `setup: ${seeded.postings} ledger postings (${seeded.transactions} transactions), ${seeded.payments} payments, ${seeded.members} members over 365 days; seeding ${((Date.now() - seedStarted) / 1000).toFixed(1)} s, setup ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    await check(api.url, tokens[0] as string, databaseUrl);

    // Warm the JIT, the pools and the caches; not measured.
    await drive(api.url, tokens, { seconds: 3, connections: options.connections, query: "" });
    console.log(`\n${options.connections} concurrent clients, ${options.seconds} s per run, ${ADMINS} admins rotated`);
    for (let round = 1; round <= options.rounds; round++) {
      const get = keepAliveGet(options.connections);
      const health = stats((await closedLoop(options.seconds, options.connections, async () => ({ ok: (await get(`${api?.url}/health`)).status === 200, kind: "health" }))).all);
      const month = await measure(api, tokens, { ...options, query: "" });
      const year = await measure(api, tokens, { ...options, query: yearQuery() });
      console.log(`\nround ${round}`);
      console.log("label".padEnd(34), "req/s".padStart(8), "p50 ms".padStart(8), "p95 ms".padStart(8), "p99 ms".padStart(8), "failed".padStart(7), "  CPU/request API + Postgres");
      line("GET /health", health, options.seconds);
      line("metrics, last 30 days (default)", month.stats, options.seconds, month);
      line("metrics, 366 days (widest)", year.stats, options.seconds, year);
      console.log(
        `p95 ratio to /health: 30 days ${(month.stats.p95 / Math.max(0.001, health.p95)).toFixed(1)}, 366 days ${(year.stats.p95 / Math.max(0.001, health.p95)).toFixed(1)}; ` +
          `30-day p95 ${month.stats.p95.toFixed(1)} ms (target < 200 ms) ${month.stats.p95 < 200 ? "PASS" : "MISS"}`,
      );
    }
    console.log(`total time ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await api?.stop();
    await issuer.close();
    await kv.dropKeys();
  }
}

function yearQuery(): string {
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const today = Math.floor(Date.now() / 86_400_000) * 86_400_000;
  return `?from=${day(today - 365 * 86_400_000)}&to=${day(today)}`;
}

interface Measured {
  stats: Stats;
  apiMs: number;
  dbMs: number;
}

async function measure(api: Child, tokens: string[], options: { seconds: number; connections: number; query: string }): Promise<Measured> {
  const backends = await postgresBackends(PG_ADMIN_URL, DB_NAME);
  const dbBefore = cpuMsByPid(backends);
  const apiBefore = cpuMs([api.pid]);
  const result = await drive(api.url, tokens, options);
  const n = Math.max(1, result.all.length);
  return { stats: stats(result.all), apiMs: (cpuMs([api.pid]) - apiBefore) / n, dbMs: cpuDelta(dbBefore, cpuMsByPid(backends)) / n };
}

function drive(url: string, tokens: string[], options: { seconds: number; connections: number; query: string }) {
  const get = keepAliveGet(options.connections);
  return closedLoop(options.seconds, options.connections, async (_worker, n) => {
    const res = await get(`${url}/api/admin/finance/metrics${options.query}`, { authorization: `Bearer ${tokens[n % tokens.length]}` });
    return { ok: res.status === 200, kind: "metrics" };
  });
}

function line(label: string, s: Stats, seconds: number, m?: Measured): void {
  console.log(
    label.padEnd(34),
    (s.count / seconds).toFixed(1).padStart(8),
    s.p50.toFixed(1).padStart(8),
    s.p95.toFixed(1).padStart(8),
    s.p99.toFixed(1).padStart(8),
    String(s.failed).padStart(7),
    m ? `  ${m.apiMs.toFixed(2)} + ${m.dbMs.toFixed(2)} ms` : "",
  );
}

/** The figures the route answers for the widest window, against the same sums read straight from the tables. */
async function check(url: string, token: string, databaseUrl: string): Promise<void> {
  const res = await fetch(`${url}/api/admin/finance/metrics${yearQuery()}`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`metrics answered ${res.status}: ${await res.text()}`);
  const m = (await res.json()) as { coins: { minted: number; transferred: number }; outstanding: { coins: number }; reconciliation: { ok: boolean; paymentsChecked: number }; payments: { totals: { completed: number } } };
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ minted: string; transferred: string; outstanding: string }>(
      `select (select -sum(amount) from ledger_postings where account_id = 'sys_mint')::text as minted,
              (select sum(p.amount) from ledger_postings p join ledger_transactions t on t.id = p.transaction_id where t.type = 'transfer' and p.amount > 0)::text as transferred,
              (select sum(balance) from ledger_accounts where kind = 'wallet')::text as outstanding`,
    );
    const direct = rows[0] as { minted: string; transferred: string; outstanding: string };
    const agree = m.coins.minted === Number(direct.minted) && m.coins.transferred === Number(direct.transferred) && m.outstanding.coins === Number(direct.outstanding);
    console.log(
      `check (366 days = all seeded history): minted ${m.coins.minted}, transferred ${m.coins.transferred}, outstanding ${m.outstanding.coins}; ` +
        `${agree ? "equal to" : "DIFFERENT FROM"} the direct sums; reconciliation ${m.reconciliation.ok ? "ok" : "NOT OK"} over ${m.reconciliation.paymentsChecked} completed payments`,
    );
    if (!agree || !m.reconciliation.ok) throw new Error("finance figures disagree with the tables");
  } finally {
    await client.end();
  }
}

/**
 * A year of history in a few set-based statements, as an operator's bulk load: the ledger's
 * triggers are off while it loads (each posting's `seq` and `balance_after` are computed with window
 * functions instead, the balances set from the postings afterwards) and its secondary indexes are
 * built once at the end. Every member has one payment (80 % completed, each credited by a funding
 * transaction); 20,000 funded members buy a plan; transfers (1–5 coins) go from funded members only,
 * so no wallet ends below zero.
 */
async function seed(url: string, postings: number, payments: number) {
  const members = payments;
  const subscriptions = Math.min(20_000, Math.floor(members / 5));
  const awards = Math.min(10_000, Math.floor(members / 10));
  const funded = Math.floor(payments * 0.8);
  const transfers = Math.max(0, Math.floor(postings / 2) - funded - subscriptions - awards);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const q = (text: string, values: unknown[] = []) => client.query(text, values);
  try {
    await q("set synchronous_commit = off");
    await q("set maintenance_work_mem = '256MB'");
    await q("set work_mem = '64MB'");
    await q("select setseed(0.42)");
    const { rows: indexes } = await client.query<{ name: string; definition: string }>(
      `select indexname as name, indexdef as definition from pg_indexes
       where schemaname = 'public' and tablename in ('ledger_postings', 'ledger_transactions', 'payments', 'subscription_charges')
         and indexname not in (select conname from pg_constraint)`,
    );
    for (const { name } of indexes) await q(`drop index "${name}"`);
    for (const table of ["ledger_accounts", "ledger_transactions", "ledger_postings"]) await q(`alter table ${table} disable trigger user`);

    const member = (g: string) => `'usr_f' || lpad((${g})::text, 7, '0')`;
    const wallet = (g: string) => `'wal_f' || lpad((${g})::text, 7, '0')`;
    await q(`insert into users (id, subject, role, created_at) select ${member("g")}, 'finance-' || g, 'user', now() - interval '400 days' from generate_series(1, $1::int) g`, [members]);
    await q(`insert into ledger_accounts (id, kind, user_id) select ${wallet("g")}, 'wallet', ${member("g")} from generate_series(1, $1::int) g`, [members]);
    // Member g pays once; g % 10 < 8 completes (so members 1–7 of every ten are funded), the rest fail, expire or wait.
    await q(
      `create temp table seed_payments as
       select g, 'pay_f' || lpad(g::text, 7, '0') as id, (array['card-a', 'card-b', 'crypto', 'mobile-money'])[1 + g % 4] as provider,
              case when g % 10 < 8 then 'completed' when g % 10 = 8 then 'failed' when g % 20 = 9 then 'expired' else 'pending' end as status,
              2100 + floor(random() * 3000)::bigint as coins, now() - random() * interval '365 days' as created_at
       from generate_series(1, $1::int) g`,
      [payments],
    );
    await q(
      `insert into payments (id, provider, user_id, status, amount, currency, coins, ledger_transaction_id, created_at, updated_at, completed_at)
       select id, provider, ${member("g")}, status,
              case provider when 'crypto' then coins * 0.0000002 else coins end,
              case provider when 'card-a' then 'USD' when 'crypto' then 'BTC' else 'KES' end, coins,
              case when status = 'completed' then 'txn_fp' || lpad(g::text, 7, '0') end,
              created_at, least(now(), created_at + interval '3 minutes'),
              case when status = 'completed' then least(now(), created_at + interval '3 minutes') end
       from seed_payments`,
    );
    // Every transaction moves `amount` from one account to another: two postings.
    await q(`create temp table seed_txns (id text, type text, actor text, ext text, at timestamptz, from_account text, to_account text, amount bigint)`);
    await q(
      `insert into seed_txns select 'txn_fp' || lpad(g::text, 7, '0'), 'funding', ${member("g")}, 'payment:' || id, least(now(), created_at + interval '3 minutes'), 'sys_mint', ${wallet("g")}, coins
       from seed_payments where status = 'completed'`,
    );
    // Subscribers: members 5k + 1 (funded: g % 10 is 1 or 6), one in four on enterprise.
    await q(
      `insert into seed_txns select 'txn_fs' || lpad(k::text, 7, '0'), 'subscription', ${member("5 * k + 1")}, null, now() - random() * interval '365 days',
              ${wallet("5 * k + 1")}, 'sys_subscription_revenue', case when k % 4 = 0 then 2000 else 500 end
       from generate_series(0, $1::int - 1) k`,
      [subscriptions],
    );
    await q(
      `insert into seed_txns select 'txn_fa' || lpad(k::text, 7, '0'), 'award', null, null, now() - random() * interval '365 days', 'sys_mint', ${wallet("10 * k + 2")}, 50
       from generate_series(0, $1::int - 1) k`,
      [awards],
    );
    // Senders 10m + r (r in 1..7, all funded) each send 5–6 times at most; recipients anyone else.
    await q(
      `insert into seed_txns select 'txn_ft' || lpad(k::text, 8, '0'), 'transfer', ${member("s")}, null, now() - random() * interval '365 days',
              ${wallet("s")}, ${wallet("case when r = s then r % $2::int + 1 else r end")}, 1 + k % 5
       from generate_series(0::bigint, $1::bigint - 1) k,
            lateral (select 10 * ((k * 7919) % ($2::int / 10)) + 1 + k % 7 as s, 1 + (k * 104729) % $2::int as r) x`,
      [transfers, members],
    );
    await q(`insert into ledger_transactions (id, type, actor_user_id, external_ref, created_at) select id, type, actor, ext, at from seed_txns`);
    await q(
      `insert into subscription_charges (transaction_id, user_id, plan_id, coins, created_at)
       select id, actor, case amount when 2000 then 'enterprise' else 'premium' end, amount, at from seed_txns where type = 'subscription'`,
    );
    await q(
      `insert into subscriptions (id, user_id, plan_id, current_period_start, current_period_end, created_at, updated_at)
       select 'sub_' || id, actor, case amount when 2000 then 'enterprise' else 'premium' end, at, at + interval '30 days', at, at from seed_txns where type = 'subscription'`,
    );
    await q(
      `insert into ledger_postings (transaction_id, account_id, amount, balance_after, seq, created_at)
       select id, account_id, amount, sum(amount) over w, row_number() over w, at
       from (select t.id, t.at, p.account_id, p.amount from seed_txns t
             cross join lateral (values (t.from_account, -t.amount), (t.to_account, t.amount)) as p(account_id, amount)) x
       window w as (partition by account_id order by at, id rows between unbounded preceding and current row)`,
    );
    await q(
      `update ledger_accounts a set balance = s.balance, last_seq = s.postings
       from (select account_id, sum(amount) as balance, count(*) as postings from ledger_postings group by account_id) s where s.account_id = a.id`,
    );
    for (const table of ["ledger_accounts", "ledger_transactions", "ledger_postings"]) await q(`alter table ${table} enable trigger user`);
    for (const { definition } of indexes) await q(definition);
    await q("vacuum analyze users, ledger_accounts, ledger_transactions, ledger_postings, payments, subscriptions, subscription_charges");
    const { rows } = await client.query<{ postings: string; transactions: string; payments: string; negative: string; total: string }>(
      `select (select count(*) from ledger_postings)::text as postings, (select count(*) from ledger_transactions)::text as transactions,
              (select count(*) from payments)::text as payments, (select count(*) from ledger_accounts where kind = 'wallet' and balance < 0)::text as negative,
              (select sum(balance) from ledger_accounts)::text as total`,
    );
    const r = rows[0] as { postings: string; transactions: string; payments: string; negative: string; total: string };
    if (Number(r.negative) !== 0 || Number(r.total) !== 0) throw new Error(`seeded ledger is inconsistent: ${r.negative} negative wallets, balances sum to ${r.total}`);
    return { postings: Number(r.postings), transactions: Number(r.transactions), payments: Number(r.payments), members };
  } finally {
    await client.end();
  }
}
