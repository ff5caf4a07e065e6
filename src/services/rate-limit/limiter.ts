import { ApiError } from "../../errors";
import type { KeyValueStore } from "../../kv/port";
import type { Tier } from "../tiers/port";
import { AI_LEASE_MS, HOUR_MS, LIMITS } from "./limits";
import { renewLease } from "../../kv/lease";
import { rateCheckScript, type RateCheckReply } from "./script";

export interface RateCheckInput {
  /** Who is limited: `user:<id>` or `key:<id>`. */
  subject: string;
  tier: Tier;
  ai: boolean;
  now: number;
  /** Unique per request; names its burst entry and AI lease. */
  member: string;
  /** The key of the caller's account deletion marker, checked in the same round trip. */
  deletedMarker?: string;
}

export interface RateOutcome {
  reply: RateCheckReply;
  headers: Record<string, string>;
}

/** The store keys a caller's quotas use at `now` (an erasure drops a member's, for them and their API keys). */
export function keys(subject: string, now: number): string[] {
  const hour = Math.floor(now / HOUR_MS);
  const base = `rl:${subject}`;
  return [`${base}:h:${hour}`, `${base}:h:${hour - 1}`, `${base}:b`, `${base}:ai:${hour}`, `${base}:ai:${hour - 1}`, `${base}:ai:inflight`];
}

const DENIAL_MESSAGE: Record<Exclude<RateCheckReply["denied"], 0>, (t: Tier) => string> = {
  1: (t) => `rate limit exceeded: ${LIMITS[t].hourly} requests per hour on the ${t} plan`,
  2: (t) => `rate limit exceeded: ${LIMITS[t].burst} requests per minute on the ${t} plan`,
  3: (t) => `AI rate limit exceeded: ${LIMITS[t].aiHourly} AI requests per hour on the ${t} plan`,
  4: (t) => `AI rate limit exceeded: ${LIMITS[t].aiConcurrent} AI requests at once on the ${t} plan`,
};

/** Checks and counts one request in a single store round trip; throws 429 when it is over. */
export async function checkRate(kv: KeyValueStore, input: RateCheckInput): Promise<RateOutcome> {
  const limits = LIMITS[input.tier];
  const names = keys(input.subject, input.now);
  if (input.deletedMarker !== undefined) names.push(input.deletedMarker);
  const reply = await kv.eval(rateCheckScript, names, [
    input.now,
    limits.hourly,
    limits.burst,
    input.member,
    input.ai ? 1 : 0,
    limits.aiHourly,
    limits.aiConcurrent,
    AI_LEASE_MS,
  ]);
  const resetS = String(Math.ceil((Math.floor(input.now / HOUR_MS) + 1) * (HOUR_MS / 1000)));
  const headers: Record<string, string> = {
    "X-RateLimit-Limit": String(limits.hourly),
    "X-RateLimit-Remaining": String(reply.remaining),
    "X-RateLimit-Reset": resetS,
  };
  if (input.ai) {
    headers["X-AI-RateLimit-Limit"] = String(limits.aiHourly);
    headers["X-AI-RateLimit-Remaining"] = String(reply.aiRemaining);
    headers["X-AI-RateLimit-Reset"] = resetS;
  }
  if (reply.accountDeleted) return { reply, headers: {} };
  if (reply.denied !== 0) {
    throw new ApiError("rate_limit_exceeded", DENIAL_MESSAGE[reply.denied](input.tier), { retryAfter: reply.retryAfter, headers });
  }
  return { reply, headers };
}

/** Frees an AI slot when its request ends; a lost release is healed by the lease expiring. */
export async function releaseAiSlot(kv: KeyValueStore, subject: string, member: string, now: number): Promise<void> {
  await kv.zrem(keys(subject, now)[5] as string, member);
}

/**
 * Extends a held AI slot's lease (and its set's expiry) while a streamed answer is still open: a
 * lease ends after AI_LEASE_MS so that a dead instance's slots free themselves, and a voice stream
 * can outlast it.
 */
export async function renewAiSlot(kv: KeyValueStore, subject: string, member: string, now: number): Promise<boolean> {
  return renewLease(kv, keys(subject, now)[5] as string, member, now, AI_LEASE_MS);
}
