/**
 * `npm run chaos`: a bank test over HTTP with faults. The Node entry runs as a child process
 * against the real Postgres and Redis; clients send keyed and unkeyed transfers between a few
 * people at once (retrying keyed ones with their key until they get an answer), while Postgres
 * backends of the server are terminated now and then and the server is killed with SIGKILL and
 * started again twice. Afterwards the ledger is audited against what the clients were told
 * (audit.ts). Exits 1 on any failed check; bounded to about a minute.
 */
import pg from "pg";
import { buildApi } from "../../bench/lib/servers";
import { startTestIssuer } from "../support/issuer";
import { databaseUrl } from "../support/pg";
import { freePort } from "../support/process";
import { TEST_PG_ADMIN_URL, TEST_REDIS_URL, randomSuffix } from "../support/services";
import { auditLedger, type TransferOp } from "./audit";
import { ServerProcess } from "./server";
import { Redis } from "ioredis";

const PEOPLE = 24;
const CLIENTS = 16;
const TRAFFIC_MS = 20_000;
/** After the traffic, how long keyed transfers may still be retried for an answer. */
const SETTLE_MS = 8_000;
const SERVER_KILLS_AT = [0.35, 0.7];
const REQUEST_TIMEOUT_MS = 5_000;
/** Each person's coins from an admin before the storm; enterprise is paid from them. */
const START_COINS = 2_500;
const ENTERPRISE_PRICE = 2_000;

const started = Date.now();
const watchdog = setTimeout(() => {
  console.error("chaos: gave up after 120 s");
  process.exit(1);
}, 120_000);

const suffix = randomSuffix();
const dbName = `api_chaos_${suffix}`;
const kvPrefix = `chaos:${suffix}:`;
const admin = new pg.Client({ connectionString: TEST_PG_ADMIN_URL });
await admin.connect();
await admin.query(`create database "${dbName}"`);
const issuer = await startTestIssuer();
buildApi();
const port = await freePort();
const server = new ServerProcess(
  { DATABASE_URL: databaseUrl(dbName), REDIS_URL: TEST_REDIS_URL, KV_PREFIX: kvPrefix, OIDC_ISSUER: issuer.url, OIDC_AUDIENCE: issuer.audience, PORT: String(port), LOG_LEVEL: "warn" },
  `http://127.0.0.1:${port}`,
);

const ops: TransferOp[] = [];
const counts = { requests: 0, retries: 0, backendKills: 0, keyedUnresolved: 0 };
let failures: string[] = [];
try {
  await server.start(Date.now() + 30_000);
  const boss = await person({ admin: true });
  const people = await Promise.all(Array.from({ length: PEOPLE }, () => person()));
  // Coins for everyone, then enterprise for everyone (paid from the wallet), so the plan's rate
  // limits stay out of the way.
  await Promise.all(people.map((p, i) => call("/api/v1/wallet/coins/award", boss.token, { userId: p.id, amount: START_COINS, reason: "chaos seed" }, `seed-${i}`, 200)));
  await Promise.all(people.map((p, i) => call("/api/v1/subscriptions", p.token, { planId: "enterprise" }, `plan-${i}`, 201)));
  const inWallets = PEOPLE * (START_COINS - ENTERPRISE_PRICE);

  const trafficEnds = Date.now() + TRAFFIC_MS;
  const settleEnds = trafficEnds + SETTLE_MS;
  let restarting: Promise<void> | undefined;
  let n = 0;
  const client = async () => {
    while (Date.now() < trafficEnds) {
      const from = people[Math.floor(Math.random() * PEOPLE)] as Person;
      let to = from;
      while (to === from) to = people[Math.floor(Math.random() * PEOPLE)] as Person;
      const op: TransferOp = { note: `chaos:${n++}`, keyed: Math.random() < 0.5, outcome: "unknown" };
      ops.push(op);
      await transfer(op, from, to, 1 + Math.floor(Math.random() * 200), settleEnds);
    }
  };
  const backendKiller = async () => {
    while (Date.now() < trafficEnds) {
      await sleep(300 + Math.random() * 900);
      if (restarting) await restarting;
      const { rows } = await admin.query("select pg_terminate_backend(pid) as ok from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()", [dbName]);
      counts.backendKills += rows.filter((r: { ok: boolean }) => r.ok).length;
    }
  };
  const serverKiller = async () => {
    for (const at of SERVER_KILLS_AT) {
      await sleep(trafficEnds - TRAFFIC_MS + at * TRAFFIC_MS - Date.now());
      restarting = server.kill().then(() => server.start(Date.now() + 30_000));
      await restarting;
      restarting = undefined;
    }
  };
  await Promise.all([...Array.from({ length: CLIENTS }, client), backendKiller(), serverKiller()]);

  const audit = await withDatabase((c) => auditLedger(c, ops, inWallets));
  failures = audit.failures;
  const by = (outcome: TransferOp["outcome"], keyed: boolean) => ops.filter((o) => o.outcome === outcome && o.keyed === keyed).length;
  const acked = ops.filter((o) => o.outcome === "acked").length;
  if (acked < 50) failures.push(`only ${acked} transfers were acknowledged: the storm left too little to check`);
  console.log(
    [
      `chaos: ${ops.length} transfers by ${CLIENTS} clients over ${TRAFFIC_MS / 1000} s, ${counts.requests} requests (${counts.retries} retries)`,
      `faults: ${counts.backendKills} Postgres backends terminated, server killed with SIGKILL ${server.kills} times and started ${server.starts} times`,
      `keyed: ${by("acked", true)} acknowledged, ${by("refused", true)} refused, ${by("unknown", true)} without an answer (${counts.keyedUnresolved} still claimed by a killed request)`,
      `unkeyed: ${by("acked", false)} acknowledged, ${by("refused", false)} refused, ${by("unknown", false)} without an answer`,
      `ledger: ${audit.facts.transfersInLedger} transfers; of those without an answer ${audit.facts.unknownApplied ?? 0} applied once, ${audit.facts.unknownNotApplied ?? 0} not at all`,
      failures.length === 0
        ? "checks: balanced, no negative wallet, every chain of balances whole, every acknowledged transfer exactly once, no transfer or key applied twice: PASS"
        : `checks FAILED:\n  ${failures.slice(0, 30).join("\n  ")}`,
      `took ${((Date.now() - started) / 1000).toFixed(1)} s`,
    ].join("\n"),
  );
} catch (err) {
  failures.push(String(err));
  console.error(`chaos: ${err instanceof Error ? err.stack : String(err)}\nlast server output:\n${server.lastOutput()}`);
} finally {
  await server.stop();
  await issuer.close();
  await admin.query(`drop database if exists "${dbName}" with (force)`);
  await admin.end();
  await dropKeys(kvPrefix);
  clearTimeout(watchdog);
}
process.exit(failures.length === 0 ? 0 : 1);

interface Person {
  id: string;
  token: string;
}

async function person(options: { admin?: boolean } = {}): Promise<Person> {
  const token = await issuer.sign({ sub: `chaos-${randomSuffix()}${randomSuffix()}`, email: `${randomSuffix()}@chaos.test`, roles: options.admin ? ["admin"] : [] }, { expiresIn: "1h" });
  const res = await fetch(`${server.url}/v1/auth/test`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`sign-in answered ${res.status}`);
  return { id: ((await res.json()) as { user: { id: string } }).user.id, token };
}

/** A keyed call made before the storm; anything but `expect` fails the run. */
async function call(path: string, token: string, body: unknown, key: string, expect: number): Promise<void> {
  const res = await fetch(`${server.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": key }, body: JSON.stringify(body) });
  if (res.status !== expect) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
}

/**
 * One transfer as a careful client makes it. With a key it asks again, with the same key and body,
 * until it gets an answer that says what happened (a 200 or a refusal) or time runs out. Without a
 * key it asks again only when the request surely did nothing (no connection, or the rate limiter
 * or a busy wallet refused it); a cut connection or a 500 leaves it not knowing.
 */
async function transfer(op: TransferOp, from: Person, to: Person, amount: number, until: number): Promise<void> {
  const body = JSON.stringify({ toUserId: to.id, amount, note: op.note });
  const headers: Record<string, string> = { authorization: `Bearer ${from.token}`, "content-type": "application/json" };
  if (op.keyed) headers["idempotency-key"] = `key-${op.note}`;
  let last = 0;
  for (let attempt = 0; Date.now() < until; attempt++) {
    if (attempt > 0) {
      counts.retries++;
      await sleep(50 + Math.random() * 150);
    }
    counts.requests++;
    let answer: { balance?: number; message?: string } = {};
    try {
      const res = await fetch(`${server.url}/api/v1/wallet/transfer`, { method: "POST", headers, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      last = res.status;
      answer = (await res.json().catch(() => ({}))) as typeof answer;
    } catch (err) {
      last = 0;
      const notSent = (err as { cause?: { code?: string } }).cause?.code === "ECONNREFUSED";
      if (op.keyed || notSent) continue;
      return;
    }
    if (last === 200) {
      op.outcome = "acked";
      op.balance = answer.balance;
      return;
    }
    if (last === 422 || last === 404) {
      op.outcome = "refused";
      return;
    }
    if (last === 409 && !/still in progress/.test(answer.message ?? "")) throw new Error(`${op.note}: 409 ${answer.message}`);
    if (last === 409 || last === 429 || last === 503) continue;
    if (last >= 500 && op.keyed) continue;
    if (last >= 500) return;
    throw new Error(`${op.note}: unexpected ${last} ${answer.message}`);
  }
  // A request killed with the server left its key claimed; the takeover window (5 minutes) outlasts this run.
  if (op.keyed && last === 409) counts.keyedUnresolved++;
}

async function withDatabase<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: databaseUrl(dbName) });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function dropKeys(prefix: string): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1000 }) as AsyncIterable<string[]>) if (keys.length > 0) await redis.unlink(...keys);
  } finally {
    redis.disconnect();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, Math.max(0, ms)));
}
