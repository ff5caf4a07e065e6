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
