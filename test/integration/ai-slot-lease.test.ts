import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { holdSlotUntil } from "../../src/http/rate-limit";
import { createMemoryStore } from "../../src/kv/memory";
import type { KeyValueStore } from "../../src/kv/port";
import { fixedClock } from "../../src/platform/clock";
import { checkRate, releaseAiSlot, renewAiSlot } from "../../src/services/rate-limit/limiter";
import { AI_LEASE_MS } from "../../src/services/rate-limit/limits";
import { testRedis } from "../support/redis";

const redis = testRedis();
afterAll(() => redis.cleanup());
afterEach(() => vi.useRealTimers());

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);
const stores: [string, () => KeyValueStore][] = [
  ["memory", () => createMemoryStore({ clock: fixedClock(T0) })],
  ["redis", () => redis.store()],
];

describe.each(stores)("an AI slot's lease (%s store)", (_name, makeStore) => {
  const take = (kv: KeyValueStore, subject: string, member: string, now: number) => checkRate(kv, { subject, tier: "standard", ai: true, now, member });

  it("ends after the lease unless renewed, and a renewal keeps a streaming request in flight", async () => {
    const kv = makeStore();
    const expiring = `user:lease-a-${Math.random()}`;
    await take(kv, expiring, "stream", T0);
    // Past the lease, nothing renewed it: the slot counts no more.
    expect((await take(kv, expiring, "later", T0 + AI_LEASE_MS + 30_000)).reply.aiInflight).toBe(1);

    const renewed = `user:lease-b-${Math.random()}`;
    await take(kv, renewed, "stream", T0);
    expect(await renewAiSlot(kv, renewed, "stream", T0 + AI_LEASE_MS - 20_000)).toBe(true);
    expect((await take(kv, renewed, "later", T0 + AI_LEASE_MS + 30_000)).reply.aiInflight).toBe(2);
  });

  it("does not take back a slot that was released", async () => {
    const kv = makeStore();
    const subject = `user:lease-c-${Math.random()}`;
    await take(kv, subject, "stream", T0);
    await releaseAiSlot(kv, subject, "stream", T0 + 1_000);
    expect(await renewAiSlot(kv, subject, "stream", T0 + 2_000)).toBe(false);
    expect((await take(kv, subject, "next", T0 + 3_000)).reply.aiInflight).toBe(1);
  });
});

describe("holding a streamed answer's slot", () => {
  it("renews every half lease until the stream ends, and returns only after the last renewal landed", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    let end!: () => void;
    const streaming = new Promise<void>((resolve) => (end = resolve));
    let landed = 0;
    let finishRenewal!: () => void;
    const renew = vi.fn(
      () =>
        new Promise<void>((resolve) => {
          finishRenewal = () => {
            landed += 1;
            resolve();
          };
        }),
    );
    let held = true;
    const holding = holdSlotUntil(streaming, renew).then(() => (held = false));
    vi.advanceTimersByTime(AI_LEASE_MS / 2);
    finishRenewal();
    vi.advanceTimersByTime(AI_LEASE_MS / 2);
    expect(renew).toHaveBeenCalledTimes(2);
    // The stream ends while the second renewal is still on its way: the release must wait for it.
    end();
    await Promise.resolve();
    await Promise.resolve();
    expect(held).toBe(true);
    finishRenewal();
    await holding;
    expect(landed).toBe(2);
    vi.advanceTimersByTime(AI_LEASE_MS * 3);
    expect(renew).toHaveBeenCalledTimes(2);
  });
});
