import { createServer, type Server } from "node:http";
import { sql } from "drizzle-orm";
import { queryRows } from "../src/db/rows";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { createPgDatabase } from "../src/node/database";
import { migrateDatabase } from "../src/node/migrate";
import { partners } from "../src/db/tables/partners";
import { users } from "../src/db/schema";
import { createIdGenerator, webRandom } from "../src/platform/ids";
import { systemClock } from "../src/platform/clock";
import { createJsonLogger } from "../src/platform/logger";
import { enqueue } from "../src/services/outbox/enqueue";
import { newWebhookSecret, signatureHeader } from "../src/services/outbox/signing";
import { runTs } from "../test/support/process";
import { freshDatabase } from "./lib/servers";

export interface OutboxBenchOptions {
  events: number;
  rate: number;
  endpoints: number;
  failingShare: number;
  recoverAfterSeconds: number;
  /** Mean answer time of an endpoint in ms; each answer takes between half and one and a half of it. */
  latencyMs: number;
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;

/**
 * `npm run bench -- outbox`: events enqueued at a fixed rate, each in a transaction of its own, to
 * endpoints on loopback of which a share fails until it recovers; the delivery loop runs in a
 * process of its own as on the Node server. Endpoints answer after a partner-like delay (`latencyMs`
 * on average). Every arrival is verified with `standardwebhooks`.
 * Baseline in the same run: the same signed posts sent directly, without the outbox.
 */
export async function benchOutbox(o: OutboxBenchOptions): Promise<void> {
  const url = await freshDatabase(`bench_outbox_${process.pid}`);
  const database = createPgDatabase(url, { max: 20 });
  await migrateDatabase(database, createJsonLogger({ level: "warn" }));
  const db = database.session().db;
  const ids = createIdGenerator(systemClock, webRandom);
  const started = Date.now();
  const recoverAt = started + o.recoverAfterSeconds * 1000;

  const committedAt = new Map<string, number>();
  const firstAttemptAt = new Map<string, number>();
  const delivered = new Set<string>();
  let unsigned = 0;
  let attempts = 0;

  const servers: Server[] = [];
  const endpoints: { host: string; port: number; secret: string; failing: boolean; partnerId: string }[] = [];
  for (let i = 0; i < o.endpoints; i++) {
    const secret = newWebhookSecret(webRandom);
    const failing = i < Math.round(o.endpoints * o.failingShare);
    const verifier = new Webhook(secret);
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const now = Date.now();
        attempts++;
        const id = String(req.headers["webhook-id"]);
        try {
          verifier.verify(Buffer.concat(chunks).toString("utf8"), req.headers as Record<string, string>);
        } catch {
          unsigned++;
        }
        if (!firstAttemptAt.has(id)) firstAttemptAt.set(id, now);
        const answer = () => {
          if (failing && now < recoverAt) return res.writeHead(500).end();
          delivered.add(id);
          res.writeHead(200).end();
        };
        setTimeout(answer, o.latencyMs * (0.5 + Math.random()));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    servers.push(server);
    const userId = ids.next("usr");
    const partnerId = ids.next("ptn");
    const port = (server.address() as AddressInfo).port;
    const host = `e${i}.bench`;
    await db.insert(users).values({ id: userId, subject: `bench-${userId}` });
    await db.insert(partners).values({
      id: partnerId, userId, companyName: `Endpoint ${i}`, contactName: "Bench", contactEmail: "bench@example.test", description: "bench", businessType: "venue", country: "KE",
      status: "approved", webhookUrl: `http://${host}:${port}/hooks`, webhookEvents: ["partner.profile.updated"], webhookEnabled: true, webhookSecret: secret,
      createdAt: new Date(), updatedAt: new Date(),
    });
    endpoints.push({ host, port, secret, failing, partnerId });
  }

  // Baseline: the same signed posts, straight from here at the same rate, for a tenth of the events.
  const direct: number[] = [];
  {
    const n = Math.max(100, Math.round(o.events / 10));
    const sends: Promise<void>[] = [];
    for (let i = 0; i < n; i++) {
      const e = endpoints[o.endpoints - 1 - (i % (o.endpoints - Math.round(o.endpoints * o.failingShare)))]!;
      const t0 = performance.now();
      const id = `baseline_${i}`;
      const body = JSON.stringify({ type: "partner.profile.updated", timestamp: new Date().toISOString(), data: { partnerId: e.partnerId, changed: ["baseline"] } });
      const ts = Math.floor(Date.now() / 1000);
      sends.push(
        signatureHeader([e.secret], id, ts, body)
          .then((signature) => fetch(`http://127.0.0.1:${e.port}/hooks`, { method: "POST", body, headers: { "content-type": "application/json", "webhook-id": id, "webhook-timestamp": String(ts), "webhook-signature": signature } }))
          .then(async (r) => void (await r.arrayBuffer(), direct.push(performance.now() - t0))),
      );
      await new Promise((r) => setTimeout(r, 1000 / o.rate));
    }
    await Promise.all(sends);
  }
  delivered.clear();
  firstAttemptAt.clear();
  attempts = 0;
  unsigned = 0;

  const worker = runTs("test/support/outbox-worker-process.ts", [], { DATABASE_URL: url, HOOK_HOSTS: endpoints.map((e) => e.host).join(","), BATCH: "100", IDLE_MS: "50", MAX_IN_FLIGHT: "500" });
  while (!worker.stdout().includes("ready")) await new Promise((r) => setTimeout(r, 20));

  const produceStart = Date.now();
  // At most as many transactions in flight as the pool has connections: a machine that cannot
  // commit at the asked rate shows a lower committed rate instead of queueing without bound.
  const inFlight = new Set<Promise<void>>();
  for (let i = 0; i < o.events; i++) {
    const e = endpoints[i % o.endpoints]!;
    if (inFlight.size >= 20) await Promise.race(inFlight);
    const p: Promise<void> = db
      .transaction((tx) => enqueue(tx, { ids, now: Date.now() }, { kind: "partner.profile.updated", targetId: e.partnerId, data: { partnerId: e.partnerId, changed: [`field${i}`] } }))
      .then((id) => void committedAt.set(id, Date.now()))
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
    const due = produceStart + ((i + 1) * 1000) / o.rate;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await Promise.all(inFlight);
  const produced = Date.now();
  // A message that failed twice before its endpoint recovered waits 5 minutes for its third
  // attempt: such rows are counted as scheduled, not waited for; lost is what is neither.
  const scheduledLater = async () =>
    (await queryRows<{ id: string }>(db, sql`select id from outbox_messages where status = 'pending' and next_attempt_at > now() + interval '60 seconds'`)).map((r) => r.id);
  const deadline = Date.now() + 120_000;
  let later: string[] = [];
  let lastCheck = 0;
  while (Date.now() < deadline) {
    if (delivered.size >= o.events) break;
    if (Date.now() - lastCheck > 1000) {
      lastCheck = Date.now();
      later = (await scheduledLater()).filter((id) => !delivered.has(id));
      if (delivered.size + later.length >= o.events) break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const finished = Date.now();
  later = (await scheduledLater()).filter((id) => !delivered.has(id));
  worker.child.kill("SIGKILL");
  await worker.exited;

  const lags = [...committedAt].map(([id, at]) => (firstAttemptAt.get(id) ?? Infinity) - at).sort((a, b) => a - b);
  const directSorted = direct.sort((a, b) => a - b);
  const waiting = new Set(later);
  const lost = [...committedAt.keys()].filter((id) => !delivered.has(id) && !waiting.has(id)).length;
  console.log(`outbox: ${o.events} events at ${o.rate}/s to ${o.endpoints} endpoints (${Math.round(o.failingShare * 100)} % failing for ${o.recoverAfterSeconds} s), answers after ${o.latencyMs / 2}–${(o.latencyMs * 3) / 2} ms`);
  console.log(`  produced in ${((produced - produceStart) / 1000).toFixed(1)} s (${Math.round(o.events / ((produced - produceStart) / 1000))} events/s committed)`);
  console.log(`  delivered ${delivered.size} in ${((finished - produceStart) / 1000).toFixed(1)} s; attempts ${attempts}; ${waiting.size} failed twice before their endpoint recovered and wait for their 5-minute retry`);
  console.log(`  delivery throughput while producing: ${Math.round(o.events / ((Math.max(produced, finished) - produceStart) / 1000))} deliveries/s`);
  console.log(`  commit → first attempt: p50 ${pct(lags, 0.5)} ms, p99 ${pct(lags, 0.99)} ms, max ${lags.at(-1)} ms (target p99 < 1000 ms)`);
  console.log(`  baseline (direct signed post, no outbox): p50 ${pct(directSorted, 0.5).toFixed(1)} ms, p99 ${pct(directSorted, 0.99).toFixed(1)} ms; ratio of p99s ${(pct(lags, 0.99) / pct(directSorted, 0.99)).toFixed(1)}x`);
  console.log(`  lost ${lost}, unsigned ${unsigned}`);
  for (const s of servers) s.close();
  await database.close();
}
