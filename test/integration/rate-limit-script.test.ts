import { describe, expect, it } from "vitest";
import type { KeyValueStore } from "../../src/kv/port";
import { fixedClock } from "../../src/platform/clock";
import { HOUR_MS } from "../../src/services/rate-limit/limits";
import { checkRate, releaseAiSlot } from "../../src/services/rate-limit/limiter";
import type { Tier } from "../../src/services/tiers/port";
import { useEveryStore } from "../support/every-store";

const onEveryStore = useEveryStore();

const START = Date.parse("2026-05-05T08:00:00Z");

/**
 * A fixed sequence of checks across windows and tiers. The memory twin of the Lua script must
 * answer exactly as Redis does, or the embedded default would limit differently.
 */
async function scenario(kv: KeyValueStore, clock: ReturnType<typeof fixedClock>): Promise<unknown[]> {
  const out: unknown[] = [];
  let n = 0;
  const check = async (subject: string, tier: Tier, ai: boolean) => {
    try {
      const { reply, headers } = await checkRate(kv, { subject, tier, ai, now: clock.now(), member: `m${n++}` });
      out.push({ ok: true, reply, headers });
    } catch (err) {
      out.push({ ok: false, message: (err as Error).message, retryAfter: (err as { retryAfter?: number }).retryAfter });
    }
  };
  for (let i = 0; i < 105; i++) await check("user:a", "standard", false);
  clock.advance(30_000);
  await check("user:a", "standard", false);
  clock.advance(31_000);
  await check("user:a", "standard", false);
  for (let i = 0; i < 7; i++) await check("user:b", "standard", true);
  await releaseAiSlot(kv, "user:b", "m107", clock.now());
  await check("user:b", "standard", true);
  clock.advance(HOUR_MS / 2);
  for (let i = 0; i < 3; i++) await check("user:c", "premium", true);
  clock.advance(HOUR_MS);
  await check("user:a", "enterprise", false);
  return out;
}

describe("the rate-check script", () => {
  it("answers identically on the in-memory store, Redis and Upstash", async () => {
    const results = await onEveryStore((kv) => scenario(kv, fixedClock(START)));
    const memory = results.memory as { ok: boolean }[];
    expect(memory.filter((r) => r.ok).length).toBeGreaterThan(100);
    expect(memory.filter((r) => !r.ok).length).toBeGreaterThan(3);
    expect(results.redis).toEqual(results.memory);
    expect(results.upstash).toEqual(results.memory);
  });
});

/**
 * Fills a member's AI hour at one call per second from `from`, then reads the denial's
 * retry_after and checks both sides of it: one second earlier is still refused, at it the call
 * goes through. Denied checks are not counted, so probing does not move the answer.
 */
async function retryAfterHolds(kv: KeyValueStore, subject: string, from: number, calls: number): Promise<{ retryAfter: number; earlier: boolean; at: boolean }> {
  let n = 0;
  const attempt = async (now: number) => {
    try {
      await checkRate(kv, { subject, tier: "standard", ai: true, now, member: `r${n}` });
      await releaseAiSlot(kv, subject, `r${n++}`, now);
      return { ok: true as const };
    } catch (err) {
      return { ok: false as const, retryAfter: (err as { retryAfter: number }).retryAfter };
    }
  };
  let now = from;
  for (let i = 0; i < calls; i++, now += 1000) expect((await attempt(now)).ok).toBe(true);
  const denied = await attempt(now);
  expect(denied.ok).toBe(false);
  const retryAfter = denied.ok ? 0 : denied.retryAfter;
  const earlier = (await attempt(now + (retryAfter - 1) * 1000)).ok;
  const at = (await attempt(now + retryAfter * 1000)).ok;
  return { retryAfter, earlier, at };
}

describe("retry_after", () => {
  it("is when the call goes through, when the current hour alone is full", async () => {
    // 100 AI calls from 10 minutes before the hour: the hour is full with 8+ minutes left,
    // and at the next hour's start all 100 still count as the previous hour's full weight.
    const results = await onEveryStore((kv) => retryAfterHolds(kv, `user:full-${Math.random()}`, START + HOUR_MS - 600_000, 100));
    for (const r of Object.values(results)) {
      expect(r).toMatchObject({ earlier: false, at: true });
      // 500 s to the hour, then 1% of the next hour (36 s) for the weight to fall under the limit.
      expect(r.retryAfter).toBe(536);
    }
  });

  it("is when the call goes through, when the previous hour's weight fills it", async () => {
    // 100 calls straddling the hour (40 before, 60 after): room comes back as the old 40 fade.
    const results = await onEveryStore((kv) => retryAfterHolds(kv, `user:fade-${Math.random()}`, START + HOUR_MS - 40_000, 100));
    for (const r of Object.values(results)) {
      expect(r).toMatchObject({ earlier: false, at: true });
      expect(r.retryAfter).toBeGreaterThan(1);
    }
  });
});
