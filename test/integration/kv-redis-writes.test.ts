import { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisStore } from "../../src/node/kv-redis";
import { startRedisProxy, type RedisProxy } from "../support/redis-proxy";
import { randomSuffix } from "../support/services";
import { waitFor } from "../support/wait";

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
  let proxy: RedisProxy;
  let writes: ReturnType<typeof countSocketWrites>;
  beforeAll(async () => {
    proxy = await startRedisProxy({ replyDelayMs: 100 });
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
      // The first command has left; its reply is still held back by the proxy.
      await waitFor("the first command at the proxy", () => proxy.chunks.some((c) => c.text.includes("first")));
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
