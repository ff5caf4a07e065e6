import type { MemoryScriptApi } from "../../kv/port";
import { defineScript } from "../../kv/scripts";
import { BURST_WINDOW_MS, HOUR_MS } from "./limits";

/**
 * One atomic round trip per request. The hourly quotas are sliding-window counters (the
 * previous fixed hour weighted by how much of it still overlaps, plus the current hour); the
 * burst is an exact log of the last 60 s; AI concurrency is a set of leases that expire on
 * their own if an instance dies. A denied request is not counted, and its retryAfter is the
 * first whole second at which the same request would be allowed.
 *
 * The same round trip tells whether the caller's account was deleted (optional seventh key, the
 * deletion marker of services/account/markers.ts): every instance then refuses the member at once,
 * whatever its identity cache remembers. A deleted caller's request is not counted.
 *
 * KEYS: hourCur, hourPrev, burstLog, aiHourCur, aiHourPrev, aiInflight[, deletedMarker]
 * ARGV: now, hourly, burst, member, ai(0|1), aiHourly, aiConcurrent, leaseMs
 * Reply: [denied, retryAfterS, remaining, aiRemaining, aiInflight, deleted(0|1)]
 *   denied: 0 allowed, 1 hourly, 2 burst, 3 AI hourly, 4 AI concurrency
 */
const LUA = `
local now = tonumber(ARGV[1])
local hourly = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local member = ARGV[4]
local ai = ARGV[5] == '1'
local aiHourly = tonumber(ARGV[6])
local aiConcurrent = tonumber(ARGV[7])
local lease = tonumber(ARGV[8])
local HOUR = ${HOUR_MS}
local WINDOW = ${BURST_WINDOW_MS}
local start = now - (now % HOUR)
local frac = (now - start) / HOUR
-- Counts are whole numbers; the tolerance keeps a weight that lands exactly on the limit (at the
-- second retry_after names) from being refused over a rounding error.
local EPSILON = 1e-9

if KEYS[7] and redis.call('EXISTS', KEYS[7]) == 1 then
  return { 0, 0, 0, 0, 0, 1 }
end

local function sliding(curKey, prevKey, limit)
  local cur = tonumber(redis.call('GET', curKey) or '0')
  local prev = tonumber(redis.call('GET', prevKey) or '0')
  local used = prev * (1 - frac) + cur
  local retry = 0
  if used + 1 > limit + EPSILON then
    local toHourEnd = start + HOUR - now
    local waitMs
    if cur + 1 <= limit then
      -- Room comes back within this hour, as the previous hour's weight fades.
      waitMs = toHourEnd - (limit - cur - 1) * HOUR / prev
    else
      -- This hour alone is full: next hour it becomes the weighted previous one.
      waitMs = toHourEnd + HOUR - (limit - 1) * HOUR / cur
    end
    retry = math.ceil(waitMs / 1000)
    if retry < 1 then retry = 1 end
  end
  return used, retry
end

local denied = 0
local retry = 0
local used, r = sliding(KEYS[1], KEYS[2], hourly)
if r > 0 then denied = 1; retry = r end

redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - WINDOW)
local recent = redis.call('ZCARD', KEYS[3])
if denied == 0 and recent >= burst then
  denied = 2
  local oldest = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
  retry = math.max(1, math.ceil((tonumber(oldest[2]) + WINDOW - now) / 1000))
end

local aiUsed = 0
local inflight = 0
if ai then
  local aiR
  aiUsed, aiR = sliding(KEYS[4], KEYS[5], aiHourly)
  if denied == 0 and aiR > 0 then denied = 3; retry = aiR end
  redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', now)
  inflight = redis.call('ZCARD', KEYS[6])
  if denied == 0 and inflight >= aiConcurrent then denied = 4; retry = 1 end
end

if denied == 0 then
  redis.call('INCR', KEYS[1])
  redis.call('PEXPIRE', KEYS[1], 2 * HOUR)
  redis.call('ZADD', KEYS[3], now, member)
  redis.call('PEXPIRE', KEYS[3], WINDOW)
  used = used + 1
  if ai then
    redis.call('INCR', KEYS[4])
    redis.call('PEXPIRE', KEYS[4], 2 * HOUR)
    redis.call('ZADD', KEYS[6], now + lease, member)
    redis.call('PEXPIRE', KEYS[6], lease)
    aiUsed = aiUsed + 1
    inflight = inflight + 1
  end
end

return { denied, retry, math.max(0, math.floor(hourly - used)), math.max(0, math.floor(aiHourly - aiUsed)), inflight, 0 }
`;

const EPSILON = 1e-9;

export interface RateCheckReply {
  denied: 0 | 1 | 2 | 3 | 4;
  retryAfter: number;
  remaining: number;
  aiRemaining: number;
  aiInflight: number;
  /** The caller's account carries the deletion marker; nothing was counted. */
  accountDeleted: boolean;
}

function memoryCheck(kv: MemoryScriptApi, keys: string[], args: string[]): RateCheckReply {
  const [hourCur, hourPrev, burstLog, aiCur, aiPrev, aiInflightKey, deletedMarker] = keys as [string, string, string, string, string, string, string | undefined];
  if (deletedMarker !== undefined && kv.get(deletedMarker) !== null) return { denied: 0, retryAfter: 0, remaining: 0, aiRemaining: 0, aiInflight: 0, accountDeleted: true };
  const [nowS, hourlyS, burstS, member, aiS, aiHourlyS, aiConcS, leaseS] = args as [string, string, string, string, string, string, string, string];
  const now = Number(nowS);
  const hourly = Number(hourlyS);
  const ai = aiS === "1";
  const aiHourly = Number(aiHourlyS);
  const lease = Number(leaseS);
  const start = now - (now % HOUR_MS);
  const frac = (now - start) / HOUR_MS;

  const sliding = (curKey: string, prevKey: string, limit: number): [number, number] => {
    const cur = Number(kv.get(curKey) ?? "0");
    const prev = Number(kv.get(prevKey) ?? "0");
    const used = prev * (1 - frac) + cur;
    let retry = 0;
    if (used + 1 > limit + EPSILON) {
      const toHourEnd = start + HOUR_MS - now;
      const waitMs = cur + 1 <= limit ? toHourEnd - ((limit - cur - 1) * HOUR_MS) / prev : toHourEnd + HOUR_MS - ((limit - 1) * HOUR_MS) / cur;
      retry = Math.max(1, Math.ceil(waitMs / 1000));
    }
    return [used, retry];
  };

  let denied: RateCheckReply["denied"] = 0;
  let retry = 0;
  let [used, r] = sliding(hourCur, hourPrev, hourly);
  if (r > 0) [denied, retry] = [1, r];

  kv.zremRangeByScore(burstLog, -Infinity, now - BURST_WINDOW_MS);
  const recent = kv.zcard(burstLog);
  if (denied === 0 && recent >= Number(burstS)) {
    const oldest = kv.zrangeWithScores(burstLog, 0, 0)[0]?.score ?? now;
    [denied, retry] = [2, Math.max(1, Math.ceil((oldest + BURST_WINDOW_MS - now) / 1000))];
  }

  let aiUsed = 0;
  let inflight = 0;
  if (ai) {
    let aiR: number;
    [aiUsed, aiR] = sliding(aiCur, aiPrev, aiHourly);
    if (denied === 0 && aiR > 0) [denied, retry] = [3, aiR];
    kv.zremRangeByScore(aiInflightKey, -Infinity, now);
    inflight = kv.zcard(aiInflightKey);
    if (denied === 0 && inflight >= Number(aiConcS)) [denied, retry] = [4, 1];
  }

  if (denied === 0) {
    kv.incrBy(hourCur, 1);
    kv.pexpire(hourCur, 2 * HOUR_MS);
    kv.zadd(burstLog, now, member);
    kv.pexpire(burstLog, BURST_WINDOW_MS);
    used += 1;
    if (ai) {
      kv.incrBy(aiCur, 1);
      kv.pexpire(aiCur, 2 * HOUR_MS);
      kv.zadd(aiInflightKey, now + lease, member);
      kv.pexpire(aiInflightKey, lease);
      aiUsed += 1;
      inflight += 1;
    }
  }
  return {
    denied,
    retryAfter: retry,
    remaining: Math.max(0, Math.floor(hourly - used)),
    aiRemaining: Math.max(0, Math.floor(aiHourly - aiUsed)),
    aiInflight: inflight,
    accountDeleted: false,
  };
}

export const rateCheckScript = defineScript<RateCheckReply>({
  name: "rate_check",
  lua: LUA,
  memory: memoryCheck,
  parse: (raw) => {
    const [denied, retryAfter, remaining, aiRemaining, aiInflight, deleted] = (raw as unknown[]).map(Number) as number[];
    return {
      denied: (denied ?? 0) as RateCheckReply["denied"],
      retryAfter: retryAfter ?? 0,
      remaining: remaining ?? 0,
      aiRemaining: aiRemaining ?? 0,
      aiInflight: aiInflight ?? 0,
      accountDeleted: deleted === 1,
    };
  },
});
