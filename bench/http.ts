import { load, median, printTable, type LoadResult } from "./lib/load";
import { cpuMs } from "./lib/cpu";
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
      const cpu404 = { bare: [] as number[], app: [] as number[] };
      const run = (label: string, url: string) => load(label, { url, seconds: options.seconds, connections: options.connections });
      /** A run, with the server's CPU microseconds per request read from /proc around it. */
      const measured = async (label: string, url: string, pid: number, into: number[]) => {
        const before = cpuMs([pid]);
        const result = await run(label, url);
        into.push(((cpuMs([pid]) - before) * 1000) / Math.max(1, result.total));
        return result;
      };
      // Warm up JIT and pools so the first measured round is not penalised.
      await run("warm-up", `${api.url}/bench-missing`);
      for (let round = 1; round <= options.rounds; round++) {
        const b404 = await measured(`bare 404 #${round}`, `${bare404.url}/bench-missing`, bare404.pid, cpu404.bare);
        const a404 = await measured(`app 404 #${round}`, `${api.url}/bench-missing`, api.pid, cpu404.app);
        const bH = await run(`bare health #${round}`, `${bareHealth.url}/health`);
        const aH = await run(`app GET /health #${round}`, `${api.url}/health`);
        rows.push(b404, a404, bH, aH);
        ratios404.push(a404.rps / b404.rps);
        ratiosHealth.push(aH.rps / bH.rps);
      }
      printTable(rows);
      const r404 = median(ratios404);
      console.log(`\n404 route: app/bare req/s ratio (median of ${options.rounds}) = ${r404.toFixed(2)}  (target >= 0.75) ${r404 >= 0.75 ? "PASS" : "MISS"}`);
      const [bareUs, appUs] = [median(cpu404.bare), median(cpu404.app)];
      console.log(
        `404 route, server CPU per request (steadier than req/s on a busy machine): bare ${bareUs.toFixed(0)} µs, app ${appUs.toFixed(0)} µs → bare/app = ${(bareUs / appUs).toFixed(2)}`,
      );
      console.log(`GET /health (database + store checks): app/bare ratio = ${median(ratiosHealth).toFixed(2)} (informational)`);
    } finally {
      await Promise.all([bare404.stop(), bareHealth.stop()]);
    }
  } finally {
    await api.stop();
  }
}
