import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "../../src/db/rows";
import { profileImpressionViewers, profileImpressions, profileImpressionsCapped } from "../../src/db/schema";
import { utcDay } from "../../src/services/discovery/feed";
import { pruneImpressions } from "../../src/services/discovery/impressions";
import { useTestEnvironment } from "../support/environment";

// The database is this file's own: pruning deletes every profile's past days.
const env = useTestEnvironment();
const db = () => env.db.database.db;
const NOW = Date.parse("2026-11-21T00:30:00Z");
const dayOf = (daysAgo: number) => utcDay(NOW - daysAgo * 86_400_000);

/** Rows in all three impression tables for `userId` on each of the days given. */
async function shownOn(userId: string, daysAgo: number[]): Promise<void> {
  const days = daysAgo.map(dayOf);
  await db().insert(profileImpressions).values(days.map((day) => ({ userId, day, count: 5 })));
  await db().insert(profileImpressionsCapped).values(days.map((day) => ({ userId, day })));
  await db().insert(profileImpressionViewers).values(days.flatMap((day) => [1, 2].map((v) => ({ day, userId, viewerId: `${userId}_v${v}` }))));
}

async function daysLeft(userId: string): Promise<Record<string, string[]>> {
  const left: Record<string, string[]> = {};
  for (const table of ["profile_impressions", "profile_impressions_capped", "profile_impression_viewers"]) {
    const rows = await queryRows<{ day: string }>(db(), sql`select distinct day::text as day from ${sql.identifier(table)} where user_id = ${userId} order by day`);
    left[table] = rows.map((r) => r.day);
  }
  return left;
}

describe("pruning past days' impressions", () => {
  it("deletes counts, capped lists and viewers of days before yesterday, and keeps yesterday and today", async () => {
    const id = `usr_prune_${crypto.randomUUID()}`;
    await shownOn(id, [0, 1, 2, 30]);
    // Two days × (count + capped + two viewers).
    expect(await pruneImpressions(db(), NOW)).toBe(8);
    const kept = [dayOf(1), dayOf(0)];
    expect(await daysLeft(id)).toEqual({ profile_impressions: kept, profile_impressions_capped: kept, profile_impression_viewers: kept });
    expect(await pruneImpressions(db(), NOW)).toBe(0);
  });

  it("clears a backlog in bounded batches, and the next run goes on", async () => {
    const id = `usr_prune_${crypto.randomUUID()}`;
    await shownOn(id, [2, 3, 4]);
    // Two batches of two rows per table and run: 4 of the 6 viewer rows, every count and capped row.
    expect(await pruneImpressions(db(), NOW, { batchSize: 2, maxBatches: 2 })).toBe(4 + 3 + 3);
    const rows = await queryRows<{ n: number }>(db(), sql`select count(*)::int as n from profile_impression_viewers where user_id = ${id}`);
    expect(rows[0]?.n).toBe(2);
    expect(await pruneImpressions(db(), NOW, { batchSize: 2, maxBatches: 2 })).toBe(2);
    expect(await daysLeft(id)).toEqual({ profile_impressions: [], profile_impressions_capped: [], profile_impression_viewers: [] });
  });
});
