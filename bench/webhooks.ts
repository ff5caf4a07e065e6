import { withPgClient } from "../test/support/pg";
import { startTestIssuer } from "../test/support/issuer";
import { startCardBFake, type CardBTransaction } from "../test/support/providers/card-b";
import { benchKvPrefix, REDIS_URL, freePort, freshDatabase, startApi } from "./lib/servers";

/**
 * card-b webhook deliveries against the real Node server and Postgres: every payment paid at the
 * loopback provider, its webhook delivered with a share of duplicates, all in flight at once up to
 * `concurrency`. Each delivery costs a verify call to the provider and one settle transaction.
 * Prints deliveries/s and checks that credits equal unique payments and that the ledger balances.
 */
export async function benchWebhooks(options: { deliveries: number; duplicateShare: number; concurrency: number; users: number }): Promise<void> {
  const unique = Math.round(options.deliveries * (1 - options.duplicateShare));
  const perUser = Math.ceil(unique / options.users);
  const started = Date.now();
  const [issuer, provider] = await Promise.all([startTestIssuer(), startCardBFake()]);
  const databaseUrl = await freshDatabase("api_bench_webhooks");
  const kv = benchKvPrefix("webhooks");
  const api = await startApi(
    {
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      KV_PREFIX: kv.prefix,
      OIDC_ISSUER: issuer.url,
      OIDC_AUDIENCE: issuer.audience,
      LOG_LEVEL: "warn",
      PAYMENT_RECONCILE_INTERVAL_SECONDS: "0",
      ...provider.env,
    },
    await freePort(),
  );
  try {
    // Checkouts through the API, as payers make them (a standard caller may make 100 a minute).
    const txRefs: string[] = [];
    for (let u = 0; u < options.users && txRefs.length < unique; u++) {
      const token = await issuer.sign({ sub: `bench-webhooks-${u}`, email: `wh${u}@bench.test` }, { expiresIn: "2h" });
      const batch = await Promise.all(
        Array.from({ length: Math.min(perUser, unique - txRefs.length) }, async () => {
          const res = await fetch(`${api.url}/api/v1/payments/card-b/card-collection`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: JSON.stringify({ amount: 10, phoneNumber: "+15550100", email: `wh${u}@bench.test` }),
          });
          if (res.status !== 201) throw new Error(`checkout answered ${res.status}: ${await res.text()}`);
          return ((await res.json()) as { transactionId: string }).transactionId;
        }),
      );
      txRefs.push(...batch);
    }
    const paid: CardBTransaction[] = txRefs.map((ref) => provider.pay(ref));
    const deliveries = [...paid];
    for (let i = paid.length; i < options.deliveries; i++) deliveries.push(paid[Math.floor(Math.random() * paid.length)] as CardBTransaction);
    shuffle(deliveries);
    console.log(`setup: ${paid.length} pending card-b payments paid at the provider, ${deliveries.length} deliveries (${deliveries.length - paid.length} duplicates); ${((Date.now() - started) / 1000).toFixed(1)} s`);

    const verifyBefore = provider.verifyCalls();
    const outcomes = new Map<string, number>();
    const latencies: number[] = [];
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (next < deliveries.length) {
          const tx = deliveries[next++] as CardBTransaction;
          const hook = provider.webhook(tx);
          const sent = performance.now();
          const res = await fetch(`${api.url}${hook.path}`, { method: "POST", headers: { "content-type": "application/json", ...hook.headers }, body: hook.body });
          const key = res.status === 200 ? ((await res.json()) as { result: string }).result : `HTTP ${res.status}`;
          if (res.status !== 200) await res.text();
          latencies.push(performance.now() - sent);
          outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    latencies.sort((a, b) => a - b);
    const pct = (p: number) => (latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0).toFixed(1);

    // The same number of deliveries refused at the hash check, in the same run: the HTTP stack's
    // cost for a webhook, so the ratio says what verifying and crediting add on this machine now.
    let sentRefused = 0;
    const r0 = performance.now();
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (sentRefused < deliveries.length) {
          const hook = provider.webhook(deliveries[sentRefused++] as CardBTransaction);
          const res = await fetch(`${api.url}${hook.path}`, { method: "POST", headers: { "content-type": "application/json", "verif-hash": "wrong" }, body: hook.body });
          await res.text();
        }
      }),
    );
    const refusedPerSecond = deliveries.length / ((performance.now() - r0) / 1000);

    const check = await withPgClient(databaseUrl, async (c) => {
      const credits = await c.query<{ n: string }>(`select count(*)::text as n from ledger_transactions where type = 'funding'`);
      const completed = await c.query<{ n: string }>(`select count(*)::text as n from payments where provider = 'card-b' and status = 'completed'`);
      const total = await c.query<{ total: string }>(`select coalesce(sum(balance), 0)::text as total from ledger_accounts`);
      const mismatched = await c.query<{ n: string }>(
        `select count(*)::text as n from ledger_accounts a where a.balance <> coalesce((select sum(p.amount) from ledger_postings p where p.account_id = a.id), 0)`,
      );
      return { credits: Number(credits.rows[0]?.n), completed: Number(completed.rows[0]?.n), total: Number(total.rows[0]?.total), mismatched: Number(mismatched.rows[0]?.n) };
    });

    console.log(`deliveries: ${deliveries.length} in ${seconds.toFixed(2)} s at ${options.concurrency} in flight → ${Math.round(deliveries.length / seconds)} deliveries/s`);
    console.log(`latency ms: p50 ${pct(0.5)}, p95 ${pct(0.95)}, p99 ${pct(0.99)}`);
    console.log(`baseline, refused at the hash check: ${Math.round(refusedPerSecond)} deliveries/s → verified deliveries run at ${(deliveries.length / seconds / refusedPerSecond).toFixed(2)}× of it`);
    console.log(`answers: ${[...outcomes].map(([k, v]) => `${k} ${v}`).join(", ")}`);
    console.log(`verify calls to the provider: ${provider.verifyCalls() - verifyBefore} (duplicates already recorded skip it)`);
    const ok = check.credits === paid.length && check.completed === paid.length && check.total === 0 && check.mismatched === 0;
    console.log(
      `credits ${check.credits} == unique payments ${paid.length}: ${check.credits === paid.length ? "yes" : "NO"}; completed ${check.completed}; ` +
        `ledger: balances sum to ${check.total}, ${check.mismatched} accounts disagree with their postings → ${ok ? "OK" : "FAILED"}`,
    );
    if (!ok) process.exitCode = 1;
  } finally {
    await Promise.all([api.stop(), issuer.close(), provider.close()]);
    await kv.dropKeys();
  }
}

function shuffle<T>(items: T[]): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
}
