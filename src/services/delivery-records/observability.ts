import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import { assertAdmin, type Principal } from "../../auth/principal";

export const WINDOWS = { "1h": 3_600_000, "24h": 24 * 3_600_000, "7d": 7 * 24 * 3_600_000 } as const;
export type Window = keyof typeof WINDOWS;

/**
 * Health of a channel over the window, from its delivery rate (delivered of decided) and p95
 * latency: `ok` at ≥ 95 % and p95 ≤ 5 s; `down` under 80 %; `degraded` in between or slower.
 */
export const HEALTH_THRESHOLDS = { okRate: 0.95, downRate: 0.8, okP95Ms: 5_000 } as const;
/** The confidence of the lower bound routes are ranked by (z for 95 %). */
const Z = 1.96;

export interface ChannelFigures {
  channel: string;
  sent: number;
  delivered: number;
  failed: number;
  deliveryRate: number | null;
  p50LatencyMs: number | null;
  p95LatencyMs: number | null;
  health: "ok" | "degraded" | "down";
}

export interface RouteFigures {
  rank: number;
  channel: string;
  route: string;
  sent: number;
  delivered: number;
  failed: number;
  deliveryRate: number | null;
  /** Wilson score lower bound of the delivery rate (95 %): few deliveries cannot outrank many. */
  score: number;
  p50LatencyMs: number | null;
  p95LatencyMs: number | null;
}

export interface Observability {
  window: Window;
  from: string;
  to: string;
  thresholds: typeof HEALTH_THRESHOLDS;
  channels: ChannelFigures[];
  routes: RouteFigures[];
}

/** The lower bound of the Wilson score interval of `successes` in `trials`; 0 without trials. */
export function wilsonLowerBound(successes: number, trials: number, z = Z): number {
  if (trials === 0) return 0;
  const p = successes / trials;
  const z2 = z * z;
  return (p + z2 / (2 * trials) - z * Math.sqrt((p * (1 - p) + z2 / (4 * trials)) / trials)) / (1 + z2 / trials);
}

export function healthOf(rate: number | null, p95: number | null): ChannelFigures["health"] {
  if (rate === null) return "ok";
  if (rate < HEALTH_THRESHOLDS.downRate) return "down";
  if (rate < HEALTH_THRESHOLDS.okRate || (p95 !== null && p95 > HEALTH_THRESHOLDS.okP95Ms)) return "degraded";
  return "ok";
}

type Row = { channel: string; route?: string; sent: string; delivered: string; failed: string; p50: number | null; p95: number | null };

const figures = (r: Row) => {
  const delivered = Number(r.delivered);
  const failed = Number(r.failed);
  const decided = delivered + failed;
  return {
    sent: Number(r.sent),
    delivered,
    failed,
    deliveryRate: decided ? delivered / decided : null,
    p50LatencyMs: r.p50 === null ? null : Math.round(Number(r.p50)),
    p95LatencyMs: r.p95 === null ? null : Math.round(Number(r.p95)),
  };
};

/** Every figure from the delivery records of the window, aggregated in SQL over the window index. */
export async function messagingObservability(db: Db, actor: Principal, window: Window, now: number): Promise<Observability> {
  assertAdmin(actor);
  const to = new Date(now).toISOString();
  const from = new Date(now - WINDOWS[window]).toISOString();
  const aggregate = sql`count(*)::text as sent,
      count(*) filter (where outcome = 'delivered')::text as delivered,
      count(*) filter (where outcome = 'failed')::text as failed,
      percentile_cont(0.5) within group (order by latency_ms) as p50,
      percentile_cont(0.95) within group (order by latency_ms) as p95`;
  const inWindow = sql`occurred_at > ${from}::timestamptz and occurred_at <= ${to}::timestamptz`;
  const [channels, routes] = await Promise.all([
    queryRows<Row>(db, sql`select channel, ${aggregate} from delivery_records where ${inWindow} group by channel order by channel`),
    queryRows<Row>(db, sql`select channel, route, ${aggregate} from delivery_records where ${inWindow} group by channel, route`),
  ]);
  const ranked = routes
    .map((r) => {
      const f = figures(r);
      return { channel: r.channel, route: r.route ?? "", ...f, score: Math.round(wilsonLowerBound(f.delivered, f.delivered + f.failed) * 10_000) / 10_000 };
    })
    // Success first; among equals, the faster route.
    .sort((a, b) => b.score - a.score || (a.p50LatencyMs ?? Infinity) - (b.p50LatencyMs ?? Infinity) || a.route.localeCompare(b.route));
  return {
    window,
    from,
    to,
    thresholds: HEALTH_THRESHOLDS,
    channels: channels.map((r) => {
      const f = figures(r);
      return { channel: r.channel, ...f, health: healthOf(f.deliveryRate, f.p95LatencyMs) };
    }),
    routes: ranked.map(({ channel, route, sent, delivered, failed, deliveryRate, score, p50LatencyMs, p95LatencyMs }, i) => ({ rank: i + 1, channel, route, sent, delivered, failed, deliveryRate, score, p50LatencyMs, p95LatencyMs })),
  };
}
