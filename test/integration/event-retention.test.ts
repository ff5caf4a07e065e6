import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "../../src/db/rows";
import { eventsAfter } from "../../src/services/matching/events";
import { EVENT_RETENTION_DAYS, pruneEvents } from "../../src/services/matching/event-retention";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { signIn, type Person } from "../support/people";

// The database is this file's own, so pruning every user's old events touches no other test.
const env = useTestEnvironment();
const db = () => env.db.database.db;
const DAY = 86_400_000;
const NOW = Date.parse("2026-11-21T12:00:00Z");

let t: TestApp;
beforeAll(() => {
  t = buildTestApp({ database: env.db.database, issuer: env.issuer });
});

/** Outbox rows for `to` about `about`, each made `daysAgo` before NOW, in the order given. */
async function eventsMade(to: Person, about: Person, daysAgo: number[]): Promise<number[]> {
  const rows = await queryRows<{ id: string }>(
    db(),
    sql`insert into events (user_id, type, data, created_at)
        select ${to.id}, 'wink.received', jsonb_build_object('userId', ${about.id}::text), to_timestamp(${NOW / 1000}::float8 - d * 86400)
        from unnest(${`{${daysAgo.join(",")}}`}::float8[]) with ordinality as a(d, n) order by n
        returning id::text`,
  );
  return rows.map((r) => Number(r.id));
}

const idsLeft = async (userId: string) => (await eventsAfter(db(), userId, 0)).map((e) => e.id);

describe("pruning the event outbox", () => {
  it(`deletes events older than ${EVENT_RETENTION_DAYS} days and keeps the rest, which a replay still gets`, async () => {
    const [me, them] = await Promise.all([signIn(t, env.issuer), signIn(t, env.issuer)]);
    const ids = await eventsMade(me, them, [EVENT_RETENTION_DAYS + 5, EVENT_RETENTION_DAYS + 0.01, EVENT_RETENTION_DAYS - 0.01, 1, 0]);
    expect(await pruneEvents(db(), NOW)).toBe(2);
    expect(await idsLeft(me.id)).toEqual(ids.slice(2));
    // A stream that last saw the first (pruned) event replays everything still kept.
    expect((await eventsAfter(db(), me.id, ids[0] as number)).map((e) => e.id)).toEqual(ids.slice(2));
    expect(await pruneEvents(db(), NOW)).toBe(0);
  });

  it("clears a long backlog in bounded batches, oldest first, and the next run goes on", async () => {
    const [me, them] = await Promise.all([signIn(t, env.issuer), signIn(t, env.issuer)]);
    const ids = await eventsMade(me, them, [90, 80, 70, 60, 50, 40, 2]);
    expect(await pruneEvents(db(), NOW, { batchSize: 2, maxBatches: 2 })).toBe(4);
    expect(await idsLeft(me.id)).toEqual(ids.slice(4));
    expect(await pruneEvents(db(), NOW, { batchSize: 2, maxBatches: 2 })).toBe(2);
    expect(await idsLeft(me.id)).toEqual(ids.slice(6));
  });

  it("honours a shorter retention", async () => {
    const [me, them] = await Promise.all([signIn(t, env.issuer), signIn(t, env.issuer)]);
    const ids = await eventsMade(me, them, [3, 1]);
    // Other tests' events over two days old go too, so only this person's are counted.
    expect(await pruneEvents(db(), NOW, { retentionDays: 2 })).toBeGreaterThanOrEqual(1);
    expect(await idsLeft(me.id)).toEqual(ids.slice(1));
  });
});
