import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { utcDay } from "./feed";

/**
 * Impression counts matter only on their own UTC day; yesterday's are kept for the requests that
 * straddle midnight. Without this, both tables would gain a row per profile shown for every day
 * the platform runs. The feed's first pages call it now and then (see the discovery route), the
 * way idempotency keys are purged: no scheduler to deploy. One statement, so that it completes on
 * a request's own connection even while the request's session is being released.
 */
export async function purgeOldImpressions(db: Db, now: number): Promise<void> {
  const yesterday = utcDay(now - 86_400_000);
  await db.execute(sql`with capped as (delete from profile_impressions_capped where day < ${yesterday}::date)
    delete from profile_impressions where day < ${yesterday}::date`);
}
