import type { Random } from "../../platform/ids";

const S = 1000;
const M = 60 * S;
const H = 60 * M;

/**
 * Waits after each failed attempt (Standard Webhooks' example schedule): the first attempt goes
 * at once, then these, ten attempts over about three and a half days. After the last, the
 * delivery is failed (replayable).
 */
export const RETRY_DELAYS_MS = [5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 14 * H, 20 * H, 24 * H] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Up to this share is added at random, so endpoints that failed together are not retried together. */
export const JITTER = 0.1;
/** A Retry-After longer than this is not waited for in full. */
const MAX_RETRY_AFTER_MS = 24 * H;
/** An endpoint failing this long without a success is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * H;

/** The wait before the next attempt after `attempts` failed ones, or null when none is left. */
export function nextDelayMs(attempts: number, random: Random, retryAfterMs?: number): number | null {
  const base = RETRY_DELAYS_MS[attempts - 1];
  if (base === undefined) return null;
  const jittered = Math.round(base * (1 + JITTER * ((random.bytes(1)[0] ?? 0) / 255)));
  return retryAfterMs === undefined ? jittered : Math.max(jittered, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

/** Retry-After in seconds or as an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
