import { createServer, connect, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisStore } from "../../src/node/kv-redis";
import { randomSuffix, TEST_REDIS_URL } from "../support/services";

/**
 * A TCP proxy in front of the test Redis that can stop passing Redis's replies on (as a paused
 * or unreachable Redis behind an open connection looks) and pass the held ones on when resumed.
 */
async function startPausableProxy(): Promise<{ url: string; pause(): void; resume(): void; close(): Promise<void> }> {
  const target = new URL(TEST_REDIS_URL);
  const sockets = new Set<Socket>();
  const clients: { client: Socket; held: Buffer[] }[] = [];
  let paused = false;
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    const entry = { client, held: [] as Buffer[] };
    clients.push(entry);
    sockets.add(client).add(upstream);
    client.on("data", (data) => upstream.write(data));
    upstream.on("data", (data) => {
      if (paused) entry.held.push(data);
      else client.write(data);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    pause: () => void (paused = true),
    resume() {
      paused = false;
      for (const entry of clients) for (const data of entry.held.splice(0)) if (!entry.client.destroyed) entry.client.write(data);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const elapsed = async (work: () => Promise<unknown>): Promise<{ ms: number; error: unknown }> => {
  const started = performance.now();
  const error = await work().then(
    () => undefined,
    (err: unknown) => err,
  );
  return { ms: performance.now() - started, error };
};

describe("a Redis that stops answering on an open connection", () => {
  let proxy: Awaited<ReturnType<typeof startPausableProxy>>;
  beforeAll(async () => {
    proxy = await startPausableProxy();
  });
  afterAll(async () => {
    await proxy.close();
  });

  it("costs one command timeout, then calls fail at once until a probe gets an answer", async () => {
    const store = createRedisStore({ url: proxy.url, prefix: `test:hung:${randomSuffix()}:`, commandTimeoutMs: 300, hungOpenMs: 400 });
    try {
      await store.set("k", "v");
      proxy.pause();
      const first = await elapsed(() => store.get("k"));
      expect(first.error).toBeInstanceOf(Error);
      expect(first.ms).toBeGreaterThanOrEqual(250);
      // While the breaker is open, every call fails without waiting.
      const during = await Promise.all(Array.from({ length: 10 }, () => elapsed(() => store.get("k"))));
      for (const call of during) {
        expect(String(call.error)).toContain("not answering");
        expect(call.ms).toBeLessThan(100);
      }
      await new Promise((resolve) => setTimeout(resolve, 450));
      // Open time over, still hung: one probe waits out its timeout, the calls beside it do not.
      const [probe, beside] = await Promise.all([elapsed(() => store.get("k")), elapsed(() => store.get("k"))]);
      expect(probe.ms).toBeGreaterThanOrEqual(250);
      expect(beside.ms).toBeLessThan(100);
      expect(String(beside.error)).toContain("not answering");
      // Redis answers again: after the open time the probe succeeds and closes the breaker.
      proxy.resume();
      await new Promise((resolve) => setTimeout(resolve, 450));
      expect(await store.get("k")).toBe("v");
      const after = await Promise.all(Array.from({ length: 5 }, () => store.get("k")));
      expect(after).toEqual(["v", "v", "v", "v", "v"]);
    } finally {
      proxy.resume();
      await store.close();
    }
  });
});
