import { sql } from "drizzle-orm";
import { assertAdmin, type Principal } from "../../auth/principal";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import { ApiError } from "../../errors";
import { PRIORITIES, type Priority } from "../support-video/queue";

const DAY = 24 * 3_600_000;
export const DEFAULT_SPAN_MS = 30 * DAY;
/** A year and a day, so a calendar year with its leap day fits; longer spans are a report, not a dashboard. */
export const MAX_SPAN_MS = 367 * DAY;

export interface AnswerFigures {
  total: number;
  escalated: number;
  fallback: number;
  cited: number;
  /** Of total; null when there are no answers. */
  escalationRate: number | null;
  fallbackRate: number | null;
  citedRate: number | null;
}

export interface SupportStats {
  from: string;
  to: string;
  answers: AnswerFigures;
  byCategory: (AnswerFigures & { category: string })[];
  byLanguage: (AnswerFigures & { language: string })[];
  tickets: {
    opened: number;
    resolved: number;
    /** Median of (resolved − opened) over the tickets resolved in the window, whole seconds. */
    medianResolveSeconds: number | null;
    /** Live: the tickets open now, whatever the window. */
    open: { total: number; oldestCreatedAt: string | null; byAge: { under1h: number; from1hTo24h: number; from1dTo7d: number; over7d: number } };
  };
  videoQueue: {
    waiting: number;
    handlingMinutes: number;
    byPriority: { priority: Priority; waiting: number; oldestCreatedAt: string | null; estimatedWaitMinutes: number }[];
  };
}

export interface StatsContext {
  db: Db;
  now: number;
  handlingMinutes: number;
}

/** The window asked for, defaulting to the 30 days up to now; from < to and at most MAX_SPAN_MS. */
export function statsWindow(now: number, from?: string, to?: string): { from: Date; to: Date } {
  const end = to === undefined ? now : Date.parse(to);
  const start = from === undefined ? end - DEFAULT_SPAN_MS : Date.parse(from);
  if (start >= end) throw new ApiError("invalid_input", "from must be before to", { details: [{ path: "from", message: "must be before to" }] });
  if (end - start > MAX_SPAN_MS) throw new ApiError("invalid_input", "the window spans more than 367 days", { details: [{ path: "from", message: "at most 367 days before to" }] });
  return { from: new Date(start), to: new Date(end) };
}

type CountRow = { total: string; escalated: string; fallback: string; cited: string };
/** `grp`: grouping(category, language), 1 for a category's row, 2 for a language's, 3 for the total. */
type AnswerRow = CountRow & { category: string | null; language: string | null; grp: number };

const rate = (n: number, of: number) => (of ? n / of : null);
const figuresOf = (r: CountRow | undefined): AnswerFigures => {
  const total = Number(r?.total ?? 0);
  const escalated = Number(r?.escalated ?? 0);
  const fallback = Number(r?.fallback ?? 0);
  const cited = Number(r?.cited ?? 0);
  return { total, escalated, fallback, cited, escalationRate: rate(escalated, total), fallbackRate: rate(fallback, total), citedRate: rate(cited, total) };
};
const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string | Date).toISOString());

/**
 * Support figures from the answer records, the tickets and the video queue, each aggregated in SQL
 * over an index: answers by created_at, tickets by (status, created_at) and resolved_at, the queue
 * by its partial index on waiting requests.
 */
export async function supportStats(ctx: StatsContext, actor: Principal, window: { from?: string; to?: string }): Promise<SupportStats> {
  assertAdmin(actor);
  const { from, to } = statsWindow(ctx.now, window.from, window.to);
  const f = from.toISOString();
  const t = to.toISOString();
  const ago = (ms: number) => new Date(ctx.now - ms).toISOString();

  const [answers, resolution, open, queue] = await Promise.all([
    // One pass: per category, per language and the total, told apart by grouping().
    queryRows<AnswerRow>(
      ctx.db,
      sql`select category, language, grouping(category, language) as grp,
            count(*)::text as total,
            count(*) filter (where escalated)::text as escalated,
            count(*) filter (where via = 'fallback')::text as fallback,
            count(*) filter (where cited)::text as cited
          from support_answers
          where created_at >= ${f}::timestamptz and created_at < ${t}::timestamptz
          group by grouping sets ((category), (language), ())
          order by category nulls last, language nulls last`,
    ),
    queryRows<{ opened: string; resolved: string; median_s: number | string | null }>(
      ctx.db,
      sql`select
            (select count(*) from support_tickets where created_at >= ${f}::timestamptz and created_at < ${t}::timestamptz)::text as opened,
            count(*)::text as resolved,
            percentile_cont(0.5) within group (order by extract(epoch from resolved_at - created_at)) as median_s
          from support_tickets
          where status = 'resolved' and resolved_at >= ${f}::timestamptz and resolved_at < ${t}::timestamptz`,
    ),
    queryRows<{ total: string; under_1h: string; h1_24: string; d1_7: string; over_7d: string; oldest: string | Date | null }>(
      ctx.db,
      sql`select count(*)::text as total,
            count(*) filter (where created_at > ${ago(3_600_000)}::timestamptz)::text as under_1h,
            count(*) filter (where created_at <= ${ago(3_600_000)}::timestamptz and created_at > ${ago(DAY)}::timestamptz)::text as h1_24,
            count(*) filter (where created_at <= ${ago(DAY)}::timestamptz and created_at > ${ago(7 * DAY)}::timestamptz)::text as d1_7,
            count(*) filter (where created_at <= ${ago(7 * DAY)}::timestamptz)::text as over_7d,
            min(created_at) as oldest
          from support_tickets where status = 'open'`,
    ),
    // Every priority, waiting or not; `ahead` is what a new request of that priority would queue
    // behind (the same and higher priorities), as the enqueue answer counts it.
    queryRows<{ rank: number; waiting: string; ahead: string; oldest: string | Date | null }>(
      ctx.db,
      sql`select p.rank, coalesce(w.n, 0)::text as waiting, sum(coalesce(w.n, 0)) over (order by p.rank desc)::text as ahead, w.oldest
          from (values (0), (1), (2), (3)) as p(rank)
          left join (
            select priority_rank, count(*) as n, min(created_at) as oldest
            from support_video_requests where status = 'waiting' group by priority_rank
          ) w on w.priority_rank = p.rank
          order by p.rank desc`,
    ),
  ]);

  const byCategory = answers.filter((r) => Number(r.grp) === 1).map((r) => ({ category: r.category as string, ...figuresOf(r) }));
  const byLanguage = answers.filter((r) => Number(r.grp) === 2).map((r) => ({ language: r.language as string, ...figuresOf(r) }));
  const total = answers.find((r) => Number(r.grp) === 3);
  const res = resolution[0];
  const o = open[0];
  const byPriority = queue.map((r) => ({
    priority: PRIORITIES[Number(r.rank)] as Priority,
    waiting: Number(r.waiting),
    oldestCreatedAt: iso(r.oldest),
    estimatedWaitMinutes: (Number(r.ahead) + 1) * ctx.handlingMinutes,
  }));
  return {
    from: f,
    to: t,
    answers: figuresOf(total),
    byCategory,
    byLanguage,
    tickets: {
      opened: Number(res?.opened ?? 0),
      resolved: Number(res?.resolved ?? 0),
      medianResolveSeconds: res?.median_s === null || res?.median_s === undefined ? null : Math.round(Number(res.median_s)),
      open: {
        total: Number(o?.total ?? 0),
        oldestCreatedAt: iso(o?.oldest),
        byAge: { under1h: Number(o?.under_1h ?? 0), from1hTo24h: Number(o?.h1_24 ?? 0), from1dTo7d: Number(o?.d1_7 ?? 0), over7d: Number(o?.over_7d ?? 0) },
      },
    },
    videoQueue: { waiting: byPriority.reduce((n, p) => n + p.waiting, 0), handlingMinutes: ctx.handlingMinutes, byPriority },
  };
}
