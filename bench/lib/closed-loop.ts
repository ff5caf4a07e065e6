export interface Sample {
  ms: number;
  ok: boolean;
  kind: string;
}

export interface Stats {
  count: number;
  failed: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  p999: number;
  max: number;
}

export function stats(samples: Sample[]): Stats {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(ms.length * q))] ?? 0;
  return { count: samples.length, failed: samples.filter((s) => !s.ok).length, p50: at(0.5), p90: at(0.9), p95: at(0.95), p99: at(0.99), p999: at(0.999), max: ms[ms.length - 1] ?? 0 };
}

export interface ClosedLoopOptions {
  /**
   * Loop k starts k/connections of this many ms after the first, and requests sent before the
   * last loop has started are not counted. Loops that all start at one instant against a server
   * whose answers take a fixed time stay in step for the whole run, so every request arrives in
   * a burst of `connections`; spread starts measure the same concurrency as a steady stream.
   */
  spreadMs?: number;
  /**
   * Requests sent in this many ms after the spread are not counted either: they open the
   * connections and find cold caches. With every loop starting at once, the first requests arrive
   * as one burst of `connections` new connections; in the AI bench that is 100 of ~4,700 requests
   * in a 10 s run, the slowest 2 %, so counted it would be the p99.
   */
  warmupMs?: number;
}

/**
 * `connections` closed loops for `seconds`; each call of `step` is one timed request. `worker` is
 * the loop's index, `n` the request's number across all loops. A step that throws counts as a
 * failed request of kind "error".
 */
export async function closedLoop(
  seconds: number,
  connections: number,
  step: (worker: number, n: number) => Promise<{ ok: boolean; kind: string }>,
  options: ClosedLoopOptions = {},
): Promise<{ all: Sample[]; byKind: Map<string, Sample[]>; first: Sample[]; sent: number }> {
  const all: Sample[] = [];
  const first: Sample[] = [];
  const byKind = new Map<string, Sample[]>();
  const spread = options.spreadMs ?? 0;
  const start = performance.now();
  const countFrom = start + spread + (options.warmupMs ?? 0);
  const deadline = countFrom + seconds * 1000;
  let next = 0;
  await Promise.all(
    Array.from({ length: connections }, async (_, worker) => {
      if (spread > 0) await new Promise((resolve) => setTimeout(resolve, (spread * worker) / connections));
      let opening = true;
      while (performance.now() < deadline) {
        const t0 = performance.now();
        const { ok, kind } = await step(worker, next++).catch(() => ({ ok: false, kind: "error" }));
        const sample = { ms: performance.now() - t0, ok, kind };
        if (opening) first.push(sample);
        opening = false;
        if (t0 < countFrom) continue;
        all.push(sample);
        const list = byKind.get(kind) ?? [];
        list.push(sample);
        byKind.set(kind, list);
      }
    }),
  );
  // `first`: each loop's first request, the one that opened its connection; `sent`: counted or not.
  return { all, byKind, first, sent: next };
}
