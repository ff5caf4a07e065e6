import type { KeyValueStore } from "../../kv/port";
import { contextKeysOf } from "../ai/context-cache";
import { slotKey } from "../matching/stream-slots";
import { HOUR_MS } from "../rate-limit/limits";
import { keys as quotaKeys } from "../rate-limit/limiter";
import { failuresKeyOf } from "../vouchers/redeem";
import { deletedMarkerKey } from "./markers";

/**
 * Every key the store keeps about one member, by the modules that write them. A module that
 * starts keeping something per member adds it here; the erasure test (test/integration/
 * account-erasure.test.ts) fills the store through the API and fails while any key or value
 * still names an erased member. Keys that only live minutes and name members among others
 * (feed sessions, leaderboard pages) are left to expire: docs/api/account.md lists them.
 */
export function memberStoreKeys(userId: string, apiKeyIds: string[], now: number): { keys: string[]; sets: [string, string][] } {
  const context = contextKeysOf(userId);
  // Quota counters of this hour and the last (older ones have expired), for the member and for
  // each API key they made.
  const quotas = [`user:${userId}`, ...apiKeyIds.map((id) => `key:${id}`)].flatMap((subject) => [...quotaKeys(subject, now), ...quotaKeys(subject, now - HOUR_MS)]);
  return {
    keys: [...new Set([...context.keys, slotKey(userId), failuresKeyOf(userId), deletedMarkerKey(userId), ...quotas])],
    sets: context.sets,
  };
}

export async function dropMemberKeys(kv: KeyValueStore, userId: string, apiKeyIds: string[], now: number): Promise<void> {
  const { keys, sets } = memberStoreKeys(userId, apiKeyIds, now);
  await Promise.all([kv.del(...keys), ...sets.map(([key, member]) => kv.zrem(key, member))]);
}
