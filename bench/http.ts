import { load, median, printTable, type LoadResult } from "./lib/load";
import { freePort, freshDatabase, startApi, startProcess } from "./lib/servers";

/**
 * The app with its whole default middleware stack against a bare node:http server sending the
 * same bytes, alternating runs in one script because this machine is shared and noisy.
 */
export async function benchHttp(options: { seconds: number; rounds: number; connections: number }): Promise<void> {
  const databaseUrl = await freshDatabase("api_bench_http");
  const api = await startApi({ DATABASE_URL: databaseUrl }, await freePort());
  try {
    const notFound = await fetch(`${api.url}/bench-missing`);
    const notFoundBody = await notFound.text();
    const health = await fetch(`${api.url}/health`);
    const healthBody = await health.text();
    console.log(`app 404 body: ${notFoundBody}`);

    const bare404 = await startProcess(["bench/bare-server.mjs"], { BARE_BODY: notFoundBody, BARE_STATUS: "404" }, await freePort(), "/");
    const bareHealth = await startProcess(["bench/bare-server.mjs"], { BARE_BODY: healthBody, BARE_STATUS: "200" }, await freePort(), "/");
    try {
      const rows: LoadResult[] = [];
      const ratios404: number[] = [];
      const ratiosHealth: number[] = [];
      const run = (label: string, url: string) => load(label, { url, seconds: options.seconds, connections: options.connections });
      // Warm up JIT and pools so the first measured round is not penalised.
      await run("warm-up", `${api.url}/bench-missing`);
      for (let round = 1; round <= options.rounds; round++) {
        const b404 = await run(`bare 404 #${round}`, `${bare404.url}/bench-missing`);
        const a404 = await run(`app 404 #${round}`, `${api.url}/bench-missing`);
        const bH = await run(`bare health #${round}`, `${bareHealth.url}/health`);
        const aH = await run(`app GET /health #${round}`, `${api.url}/health`);
        rows.push(b404, a404, bH, aH);
        ratios404.push(a404.rps / b404.rps);
        ratiosHealth.push(aH.rps / bH.rps);
      }
      printTable(rows);
      const r404 = median(ratios404);
      console.log(`\n404 route: app/bare req/s ratio (median of ${options.rounds}) = ${r404.toFixed(2)}  (target >= 0.75) ${r404 >= 0.75 ? "PASS" : "MISS"}`);
      console.log(`GET /health (database + store checks): app/bare ratio = ${median(ratiosHealth).toFixed(2)} (informational)`);
    } finally {
      await Promise.all([bare404.stop(), bareHealth.stop()]);
    }
  } finally {
    await api.stop();
  }
}
