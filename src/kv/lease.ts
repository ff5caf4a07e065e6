import type { KeyValueStore } from "./port";
import { defineScript } from "./scripts";

/**
 * Extends a lease held in a sorted set (member: the holder, score: when the lease ends) and the
 * set's expiry, only while the holder still has it: a renewal that lands after the release (two
 * HTTP calls to a REST store can arrive in either order) must not take the place back. Used by
 * the AI slots and the event-stream places.
 */
const renewLeaseScript = defineScript<boolean>({
  name: "lease_renew",
  lua: "if redis.call('ZSCORE', KEYS[1], ARGV[2]) then redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2]); redis.call('PEXPIRE', KEYS[1], ARGV[3]); return 1 end\nreturn 0",
  memory: (kv, [key], [until, member, ttl]) => {
    const held = kv.zrangeWithScores(key as string, 0, -1).some((m) => m.member === member);
    if (!held) return false;
    kv.zadd(key as string, Number(until), member as string);
    kv.pexpire(key as string, Number(ttl));
    return true;
  },
  parse: (raw) => raw === 1 || raw === "1" || raw === true,
});

/** Renews `member`'s lease in `key` until `now + leaseMs`; false when it no longer holds one. */
export function renewLease(kv: KeyValueStore, key: string, member: string, now: number, leaseMs: number): Promise<boolean> {
  return kv.eval(renewLeaseScript, [key], [now + leaseMs, member, leaseMs]);
}
