import type { KeyValueStore } from "../../kv/port";
import { renewLease } from "../../kv/lease";
import { defineScript } from "../../kv/scripts";

/**
 * Open event streams per person, counted across instances in the KV store. A stream costs one
 * request of the quota and then stays open, and on Workers each holds a database session of its
 * own and polls every 2 s: without a cap, a few free accounts could hold enough streams to use up
 * the database's connections.
 */
export const STREAMS_PER_PERSON = 5;
/**
 * A stream's place is a lease in a sorted set (member: the stream, score: when the lease ends),
 * like an AI slot: an instance that dies without releasing its streams' places frees them after
 * this long. A live stream renews its lease on each heartbeat (20 s), so two renewals may be lost
 * before it lapses.
 */
export const STREAM_LEASE_MS = 60_000;

export const slotKey = (userId: string) => `events:streams:${userId}`;

export type SlotOutcome = { granted: true } | { granted: false; retryAfter: number };

/**
 * KEYS: the person's set. ARGV: now, limit, leaseMs, member.
 * Reply: [granted (0|1), retryAfterS]; retryAfterS is when the oldest lease would lapse.
 */
const takeSlotScript = defineScript<SlotOutcome>({
  name: "event_stream_slot",
  lua: `
local now = tonumber(ARGV[1])
local lease = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, math.max(1, math.ceil((tonumber(oldest[2]) - now) / 1000))}
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[4])
redis.call('PEXPIRE', KEYS[1], lease)
return {1, 0}
`,
  memory: (kv, [key], [nowS, limitS, leaseS, member]) => {
    const [now, lease] = [Number(nowS), Number(leaseS)];
    kv.zremRangeByScore(key as string, -Infinity, now);
    if (kv.zcard(key as string) >= Number(limitS)) {
      const oldest = kv.zrangeWithScores(key as string, 0, 0)[0]?.score ?? now;
      return { granted: false, retryAfter: Math.max(1, Math.ceil((oldest - now) / 1000)) };
    }
    kv.zadd(key as string, now + lease, member as string);
    kv.pexpire(key as string, lease);
    return { granted: true };
  },
  parse: (raw) => {
    const [granted, retryAfter] = (raw as unknown[]).map(Number) as [number, number];
    return granted === 1 ? { granted: true } : { granted: false, retryAfter };
  },
});

/** Takes one of the person's places for a new stream, or says when to try again. */
export function takeStreamSlot(kv: KeyValueStore, userId: string, member: string, now: number): Promise<SlotOutcome> {
  return kv.eval(takeSlotScript, [slotKey(userId)], [now, STREAMS_PER_PERSON, STREAM_LEASE_MS, member]);
}

export function renewStreamSlot(kv: KeyValueStore, userId: string, member: string, now: number): Promise<boolean> {
  return renewLease(kv, slotKey(userId), member, now, STREAM_LEASE_MS);
}

export async function releaseStreamSlot(kv: KeyValueStore, userId: string, member: string): Promise<void> {
  await kv.zrem(slotKey(userId), member);
}
