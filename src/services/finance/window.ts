import { ApiError } from "../../errors";
import { DAY_MS } from "../../platform/clock";

/** The default window: the last 30 UTC days, today included. */
export const DEFAULT_DAYS = 30;
/** The widest window: one leap year of days. Wider asks scan more history than a dashboard needs. */
export const MAX_DAYS = 366;

export interface FinanceWindow {
  /** First day, `YYYY-MM-DD` (UTC), included. */
  from: string;
  /** Last day, `YYYY-MM-DD` (UTC), included. */
  to: string;
  /** [start, end): midnight UTC of `from` and of the day after `to`. */
  start: Date;
  end: Date;
  days: number;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function parseDay(value: string, field: "from" | "to"): number {
  const m = DATE.exec(value);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : Number.NaN;
  // Date.UTC rolls 2026-02-30 over into March: a real calendar day reads back as itself.
  if (!m || Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value) {
    throw new ApiError("invalid_input", `${field} must be a calendar date YYYY-MM-DD (UTC)`, { details: [{ path: field, message: "expected a date like 2026-11-01" }] });
  }
  return ms;
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * The days a finance report covers, both ends included. Without `to` it ends today (UTC);
 * without `from` it starts 29 days before `to`, so the default is the last 30 days.
 */
export function financeWindow(query: { from?: string; to?: string }, now: number): FinanceWindow {
  const toMs = query.to !== undefined ? parseDay(query.to, "to") : Math.floor(now / DAY_MS) * DAY_MS;
  const fromMs = query.from !== undefined ? parseDay(query.from, "from") : toMs - (DEFAULT_DAYS - 1) * DAY_MS;
  if (fromMs > toMs) throw new ApiError("invalid_input", "from must not be after to", { details: [{ path: "from", message: "after to" }] });
  const days = (toMs - fromMs) / DAY_MS + 1;
  if (days > MAX_DAYS) {
    throw new ApiError("invalid_input", `the window spans ${days} days; at most ${MAX_DAYS} are allowed`, { details: [{ path: "to", message: `at most ${MAX_DAYS} days after from` }] });
  }
  return { from: day(fromMs), to: day(toMs), start: new Date(fromMs), end: new Date(toMs + DAY_MS), days };
}
