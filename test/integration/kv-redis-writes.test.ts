import { createServer, connect, Socket, type Server } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisStore } from "../../src/node/kv-redis";
import { randomSuffix, TEST_REDIS_URL } from "../support/services";

/**
 * A TCP proxy in front of the test Redis that records what the client sends (each chunk, and
 * when) and holds Redis's replies back for `replyDelayMs`, so the test can see when the store's
 * commands leave the process.
 */
async function startRecordingProxy(replyDelayMs: number): Promise<{ url: string; chunks: { at: number; text: string }[]; replies: { at: number }[]; close(): Promise<void> }> {
  const target = new URL(TEST_REDIS_URL);
  const chunks: { at: number; text: string }[] = [];
  const replies: { at: number }[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(upstream);
    client.on("data", (data) => {
      chunks.push({ at: performance.now(), text: data.toString("latin1") });
      upstream.write(data);
    });
    upstream.on("data", (data) => {
      setTimeout(() => {
        replies.push({ at: performance.now() });
        if (!client.destroyed) client.write(data);
      }, replyDelayMs);
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
    chunks,
    replies,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Counts the writes handed to the kernel by sockets connected to `port` (one per `_write`/`_writev`). */
function countSocketWrites(port: () => number): { count(): number; restore(): void } {
  const proto = Socket.prototype as unknown as Record<"_write" | "_writev", (this: Socket, ...args: unknown[]) => unknown>;
  const original = { _write: proto._write, _writev: proto._writev };
  let writes = 0;
  for (const name of ["_write", "_writev"] as const) {
    const inner = original[name];
    proto[name] = function (this: Socket, ...args: unknown[]) {
      if (this.remotePort === port()) writes++;
      return inner.apply(this, args);
    };
  }
  return {
    count: () => writes,
    restore: () => Object.assign(proto, original),
  };
}

describe("the Redis store's writes", () => {
  let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
  let writes: ReturnType<typeof countSocketWrites>;
  beforeAll(async () => {
    proxy = await startRecordingProxy(100);
    writes = countSocketWrites(() => Number(new URL(proxy.url).port));
  });
  afterAll(async () => {
    writes.restore();
    await proxy.close();
  });

  it("sends one event-loop turn's commands in one write, in order, with every reply matched", async () => {
    const prefix = `test:kv-writes:${randomSuffix()}:`;
    const kv = createRedisStore({ url: proxy.url, prefix });
    try {
      await kv.ping();
      const before = writes.count();
      const keys = Array.from({ length: 100 }, (_, i) => `k${i}`);
      expect(await Promise.all(keys.map((key, i) => kv.set(key, `v${i}`)))).toEqual(keys.map(() => true));
      expect(await Promise.all(keys.map((key) => kv.get(key)))).toEqual(keys.map((_, i) => `v${i}`));
      // Two bursts of 100 commands each, one write each.
      expect(writes.count() - before).toBe(2);
      await kv.del(...keys);
    } finally {
      await kv.close();
    }
  });

  it("does not hold a turn's commands until the replies of an earlier turn are in", async () => {
    const kv = createRedisStore({ url: proxy.url, prefix: `test:kv-writes:${randomSuffix()}:` });
    try {
      await kv.ping();
      const first = kv.get("first");
      // The next turn: the first command's reply is still held back by the proxy.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setTimeout(resolve, 20));
      const second = kv.get("second");
      await Promise.all([first, second]);
      const sentSecond = proxy.chunks.find((c) => c.text.includes("second"));
      const sentFirst = proxy.chunks.find((c) => c.text.includes("first"));
      expect(sentFirst && sentSecond).toBeTruthy();
      // Sent while the first reply was still on its way (100 ms), not after it arrived.
      const firstReply = proxy.replies.find((r) => r.at > (sentFirst?.at ?? 0));
      expect(sentSecond?.at).toBeLessThan(firstReply?.at ?? 0);
    } finally {
      await kv.close();
    }
  });
});
