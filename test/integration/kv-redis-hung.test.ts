import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisStore } from "../../src/node/kv-redis";
import { startRedisProxy, type RedisProxy } from "../support/redis-proxy";
import { randomSuffix } from "../support/services";
import { waitFor } from "../support/wait";

const elapsed = async (work: () => Promise<unknown>): Promise<{ ms: number; error: unknown }> => {
  const started = performance.now();
  const error = await work().then(
    () => undefined,
    (err: unknown) => err,
  );
  return { ms: performance.now() - started, error };
};

describe("a Redis that stops answering on an open connection", () => {
  let proxy: RedisProxy;
  beforeAll(async () => {
    proxy = await startRedisProxy();
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
      // Real time must pass: the breaker's open time (400 ms) runs on the wall clock.
      await new Promise((resolve) => setTimeout(resolve, 450));
      // Open time over, still hung: one probe waits out its timeout, the calls beside it do not.
      const [probe, beside] = await Promise.all([elapsed(() => store.get("k")), elapsed(() => store.get("k"))]);
      expect(probe.ms).toBeGreaterThanOrEqual(250);
      expect(beside.ms).toBeLessThan(100);
      expect(String(beside.error)).toContain("not answering");
      // Redis answers again: after the open time the probe succeeds and closes the breaker.
      proxy.resume();
      // Calls fail at once until the open time is over; then the probe gets the answer.
      await waitFor("the breaker to close", async () => (await store.get("k")) === "v");
      const after = await Promise.all(Array.from({ length: 5 }, () => store.get("k")));
      expect(after).toEqual(["v", "v", "v", "v", "v"]);
    } finally {
      proxy.resume();
      await store.close();
    }
  });
});
