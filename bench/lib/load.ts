import autocannon from "autocannon";

export interface LoadResult {
  label: string;
  rps: number;
  p99: number;
  non2xx: number;
  errors: number;
  total: number;
}

export interface LoadOptions {
  url: string;
  seconds: number;
  connections: number;
  headers?: Record<string, string>;
  method?: "GET" | "POST";
  body?: string;
  /** Rewrites each request, e.g. to rotate credentials. */
  setupRequest?: (req: { headers?: Record<string, string> } & Record<string, unknown>) => Record<string, unknown>;
}

/** One fixed-time autocannon run; autocannon reports latency percentiles in milliseconds. */
export async function load(label: string, options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    duration: options.seconds,
    connections: options.connections,
    method: options.method ?? "GET",
    headers: options.headers,
    body: options.body,
    ...(options.setupRequest ? { requests: [{ setupRequest: options.setupRequest as never }] } : {}),
  });
  return {
    label,
    rps: Math.round(result.requests.average),
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    total: result.requests.total,
  };
}

export function printTable(rows: LoadResult[]): void {
  console.log("label".padEnd(34), "req/s".padStart(9), "p99 ms".padStart(8), "non-2xx".padStart(9), "errors".padStart(7));
  for (const r of rows) {
    console.log(r.label.padEnd(34), String(r.rps).padStart(9), String(r.p99).padStart(8), String(r.non2xx).padStart(9), String(r.errors).padStart(7));
  }
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}
