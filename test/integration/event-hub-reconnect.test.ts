import { sql } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { queryRows } from "../../src/db/rows";
import { createJsonLogger } from "../../src/platform/logger";
import { createEventHub, type HubStream } from "../../src/services/matching/event-hub";
import { eventChannel } from "../../src/services/matching/events";
import { buildTestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { signIn } from "../support/people";
import { lockWaiters, withPgClient } from "../support/pg";
import { appStore } from "../support/redis";

const env = useTestEnvironment();

function collector(userId: string, lastId: number): HubStream & { got: number[] } {
  const got: number[] = [];
  return { userId, lastId, got, deliver: (events) => (got.push(...events.map((e) => e.id)), true), heartbeat: () => true, close: () => {} };
}

describe("the event hub", () => {
  it("gives a stream that reconnects with an older cursor, while a read for the same person runs, every event after its cursor", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const [me, other] = [await signIn(t, env.issuer), await signIn(t, env.issuer)];
    const db = env.db.database.db;
    const store = async () =>
      Number(
        (
          (await queryRows<{ id: string }>(
            db,
            sql`insert into events (user_id, type, data, created_at) values (${me.id}, 'wink.received', ${JSON.stringify({ userId: other.id })}::jsonb, now()) returning id::text as id`,
          )) as [{ id: string }]
        )[0].id,
      );
    const [e1, e2, e3] = [await store(), await store(), await store()];
    const kv = appStore();
    const hub = createEventHub({ kv, db: () => db, logger: createJsonLogger({ level: "silent" }), heartbeatMs: 60_000, pollMs: 60_000 });
    // A stream that has seen all but the last event, and then that one too.
    const a = collector(me.id, e2);
    await hub.add(a);
    await vi.waitFor(() => expect(a.got).toEqual([e3]), { timeout: 5_000 });
    const e4 = await store();
    const b = collector(me.id, e1);
    await withPgClient(env.db.url, async (locker) => {
      // The notification's read starts from a's cursor and is held up at the table.
      await locker.query("begin");
      await locker.query("lock table events in access exclusive mode");
      await kv.publish(eventChannel(me.id), "new");
      await vi.waitFor(
        async () => {
          expect(await lockWaiters(locker)).toBeGreaterThan(0);
        },
        { timeout: 10_000, interval: 10 },
      );
      // Meanwhile the same person reconnects on another device from an older event.
      await hub.add(b);
      await locker.query("commit");
    });
    await vi.waitFor(() => {
      expect(a.got).toEqual([e3, e4]);
      expect(b.got).toEqual([e2, e3, e4]);
    }, { timeout: 5_000 });
    hub.remove(a);
    hub.remove(b);
  });
});
