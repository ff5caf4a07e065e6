import type { Tier } from "../tiers/port";

export interface TierLimits {
  hourly: number;
  burst: number;
  aiHourly: number;
  aiConcurrent: number;
}

/** The spec's table: general hourly and burst (any 60 s); AI hourly and in flight at once. */
export const LIMITS: Record<Tier, TierLimits> = {
  standard: { hourly: 1_000, burst: 100, aiHourly: 100, aiConcurrent: 5 },
  premium: { hourly: 5_000, burst: 500, aiHourly: 500, aiConcurrent: 20 },
  enterprise: { hourly: 20_000, burst: 2_000, aiHourly: 2_000, aiConcurrent: 100 },
};

export const HOUR_MS = 3_600_000;
export const BURST_WINDOW_MS = 60_000;
/** An AI slot whose instance died is freed after this long. */
export const AI_LEASE_MS = 120_000;
