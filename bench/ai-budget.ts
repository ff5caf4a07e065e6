import { measure, type Latency } from "./ai";
import { holdIdleStates } from "./lib/idle-states";
import { median } from "./lib/load";
import { benchKvPrefix, REDIS_URL, freePort, startFakeInferenceHost, startProcess, type Child } from "./lib/servers";

/** One row of the AI bench's kind (see measure in ai.ts); a call that fails makes the figure worthless. */
async function run(url: string, pid: number, connections: number, seconds: number, warmupMs: number, body: string): Promise<Latency> {
  const row = await measure(url, pid, url, connections, seconds, () => ({ method: "POST", headers: { "content-type": "application/json" }, body }), { warmupMs });
  if (row.failed > 0) throw new Error(`${row.failed} calls to ${url} failed`);
  return row;
}

/**
 * The CPU budget of the AI layer on this machine. The same load as `npm run bench -- ai` (closed
 * loops against a host answering after a fixed delay) through relays that make our chat call's
 * hops (two Redis round trips around the host call, bench/relay-store.mjs) and burn a set amount
 * of CPU at each of the call's four points. The added p99 at each amount, against the host alone
 * measured just before it, says how much CPU per call a layer shaped like ours may spend before it
 * misses the AI bench's target; the AI bench prints what ours spends.
 */
export async function benchAiBudget(options: { seconds: number; warmupMs: number; rounds: number; connections: number; delayMs: number; busyUs: number[]; idleStates: "hold" | "allow" }): Promise<void> {
  const kv = benchKvPrefix("ai-budget");
  const relays: Child[] = [];
  let stopHost = () => {};
  const idle = holdIdleStates(options.idleStates);
  try {
    const host = await startFakeInferenceHost(options.delayMs);
    stopHost = host.stop;
    const hostUrl = host.url;
    for (const us of options.busyUs) {
      relays.push(await startProcess(["bench/relay-store.mjs"], { RELAY_TARGET: `${hostUrl}/api/chat`, BUSY_US: String(us), REDIS_URL, KV_PREFIX: kv.prefix }, await freePort(), "/"));
    }
    const body = JSON.stringify({ model: "bench-model:7b", stream: false, messages: [{ role: "user", content: "Hey! How was your weekend hike?" }] });
    const added = options.busyUs.map(() => ({ p50: [] as number[], p90: [] as number[], p99: [] as number[], cpu: [] as number[] }));
    const C = options.connections;
    for (let round = 1; round <= options.rounds; round++) {
      for (const [i, relay] of relays.entries()) {
        const alone = await run(`${hostUrl}/api/chat`, host.pid, C, options.seconds, options.warmupMs, body);
        const through = await run(relay.url, relay.pid, C, options.seconds, options.warmupMs, body);
        const a = added[i] as (typeof added)[number];
        a.p50.push(through.p50 - alone.p50);
        a.p90.push(through.p90 - alone.p90);
        a.p99.push(through.p99 - alone.p99);
        a.cpu.push(through.cpuMsPerRequest);
      }
    }
    console.log(`${C} concurrent closed loops, host answering after ${options.delayMs} ms, ${options.seconds} s counted per run after ${options.warmupMs / 1000} s; median of ${options.rounds} rounds; ${idle.describe}\n`);
    console.log("CPU per point µs".padEnd(18), "added CPU/call ms".padStart(17), "relay CPU/call ms".padStart(18), "added p50".padStart(10), "p90".padStart(7), "p99".padStart(7));
    let budget: number | undefined;
    for (const [i, us] of options.busyUs.entries()) {
      const a = added[i] as (typeof added)[number];
      const p99 = median(a.p99);
      if (p99 < 10) budget = us;
      console.log(String(us).padEnd(18), ((4 * us) / 1000).toFixed(2).padStart(17), median(a.cpu).toFixed(2).padStart(18), median(a.p50).toFixed(1).padStart(10), median(a.p90).toFixed(1).padStart(7), p99.toFixed(1).padStart(7));
    }
    const zero = options.busyUs.indexOf(0) >= 0 ? median((added[options.busyUs.indexOf(0)] as (typeof added)[number]).cpu) : undefined;
    console.log(
      budget === undefined
        ? "\nno amount measured kept the added p99 under 10 ms"
        : `\nadded p99 under 10 ms up to ${budget} µs at each of the four points: about ${((4 * budget) / 1000 + (zero ?? 0)).toFixed(2)} ms of CPU per call in all, the relay's own work included (npm run bench -- ai prints ours)`,
    );
  } finally {
    idle.release();
    for (const relay of relays) await relay.stop();
    stopHost();
    await kv.dropKeys();
  }
}
