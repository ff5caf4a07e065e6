/** The Postgres error behind a driver or drizzle error (drizzle wraps it as `cause`). */
export interface PgErrorInfo {
  code?: string;
  constraint?: string;
}

export function pgError(err: unknown): PgErrorInfo {
  for (let e: unknown = err, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, constraint } = e as { code?: unknown; constraint?: unknown };
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) {
      return { code, constraint: typeof constraint === "string" ? constraint : undefined };
    }
  }
  return {};
}

export const PG = {
  uniqueViolation: "23505",
  checkViolation: "23514",
  foreignKeyViolation: "23503",
  /** lock_timeout expired while waiting for a lock. */
  lockNotAvailable: "55P03",
} as const;
