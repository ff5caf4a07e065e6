import { Worker } from "node:worker_threads";

/**
 * A loopback TCP proxy in front of Redis that counts the commands clients send (RESP arrays),
 * so a benchmark sees round trips from the client's side: commands a Lua script runs inside
 * Redis are not counted, unlike in INFO commandstats. It runs in a worker thread: on the bench's
 * own event loop it competed with the load generator and became the bottleneck it was measuring.
 */
export async function startRedisCounter(target: { host: string; port: number }): Promise<{ url: string; commands(): number; close(): Promise<void> }> {
  const counter = new SharedArrayBuffer(4);
  const commands = new Int32Array(counter);
  const worker = new Worker(new URL("./redis-counter-proxy.mjs", import.meta.url), {
    workerData: { host: target.host, port: target.port, counter },
  });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once("message", (m: { port: number }) => resolve(m.port));
    worker.once("error", reject);
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    commands: () => Atomics.load(commands, 0),
    close: async () => {
      const closed = new Promise((resolve) => worker.once("message", resolve));
      worker.postMessage("close");
      await Promise.race([closed, new Promise((r) => setTimeout(r, 2_000))]);
      await worker.terminate();
    },
  };
}
