import { sql } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import type { Db } from "../../src/db/port";
import { queryRows } from "../../src/db/rows";
import { createMemoryStore } from "../../src/kv/memory";
import { createJsonLogger } from "../../src/platform/logger";
import { createEventHub, type HubStream } from "../../src/services/matching/event-hub";
import { buildTestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { signIn, type Person } from "../support/people";

const env = useTestEnvironment();

function collector(userId: string, lastId: number): HubStream & { got: number[] } {
  const got: number[] = [];
  return { userId, lastId, got, deliver: (events) => (got.push(...events.map((e) => e.id)), true), heartbeat: () => true };
}

/** Stores a wink event for `to` straight in the outbox; returns its id. */
async function storeEvent(to: Person, from: Person): Promise<number> {
  const [row] = await queryRows<{ id: string }>(
    env.db.database.db,
    sql`insert into events (user_id, type, data, created_at) values (${to.id}, 'wink.received', ${JSON.stringify({ userId: from.id })}::jsonb, now()) returning id::text as id`,
  );
  return Number(row!.id);
}

/** The test database, with `execute` replaced for the calls `intercept` takes (it returns undefined for the rest). */
function interceptedDb(intercept: (call: number, real: Db) => Promise<unknown> | undefined): Db {
  const real = env.db.database.db;
  let calls = 0;
  return new Proxy(real, {
    get(target, prop, receiver) {
      if (prop !== "execute") return Reflect.get(target, prop, receiver);
      return (query: Parameters<Db["execute"]>[0]) => intercept(++calls, real) ?? target.execute(query);
    },
  });
}

function logCollector() {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createJsonLogger({ level: "debug", sink: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }) };
}

describe("the event hub when a read fails", () => {
  it("logs the query without its bound values and with the driver's cause, and delivers on the retry", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const [me, other] = [await signIn(t, env.issuer), await signIn(t, env.issuer)];
    const stored = await storeEvent(me, other);
    // The first read fails the way a real query does: drizzle's error around the driver's.
    const db = interceptedDb((call, real) => (call === 1 ? real.execute(sql`select ${me.id}::text from events_missing`) : undefined));
    const { lines, logger } = logCollector();
    const hub = createEventHub({ kv: createMemoryStore(), db: () => db, logger, heartbeatMs: 60_000, pollMs: 60_000 });
    const stream = collector(me.id, 0);
    await hub.add(stream);
    try {
      await vi.waitFor(() => expect(stream.got).toEqual([stored]), { timeout: 5_000 });
      const warned = lines.find((l) => l.msg === "reading match events failed; retrying");
      expect(warned).toMatchObject({ level: "warn", users: 1 });
      const error = warned?.error as { message: string; cause: { message: string; code: string } };
      expect(error.message).toContain("Failed query: select $1::text from events_missing");
      expect(error.message).toContain("params: (not logged)");
      expect(JSON.stringify(warned)).not.toContain(me.id);
      expect(error.cause).toMatchObject({ message: 'relation "events_missing" does not exist', code: "42P01" });
    } finally {
      hub.remove(stream);
    }
  });
});
