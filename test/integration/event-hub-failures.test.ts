import { sql } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import type { Db } from "../../src/db/port";
import { queryRows } from "../../src/db/rows";
import type { KeyValueStore } from "../../src/kv/port";
import { createJsonLogger } from "../../src/platform/logger";
import { createEventHub, type HubStream } from "../../src/services/matching/event-hub";
import { eventChannel } from "../../src/services/matching/events";
import { buildTestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { signIn, type Person } from "../support/people";
import { waitFor } from "../support/wait";

const env = useTestEnvironment();

function collector(userId: string, lastId: number): HubStream & { got: number[] } {
  const got: number[] = [];
  return { userId, lastId, got, deliver: (events) => (got.push(...events.map((e) => e.id)), true), heartbeat: () => true, close: () => {} };
}

/** Stores a wink event for `to` straight in the outbox; returns its id. */
async function storeEvent(to: Person, from: Person): Promise<number> {
  const [row] = await queryRows<{ id: string }>(
    env.db.database.db,
    sql`insert into events (user_id, type, data, created_at) values (${to.id}, 'wink.received', ${JSON.stringify({ userId: from.id })}::jsonb, now()) returning id::text as id`,
  );
  return Number(row!.id);
}

/**
 * The test database, with `execute` replaced for the calls `intercept` takes (it returns undefined
 * for the rest); `calls()` counts the reads begun so far.
 */
function interceptedDb(intercept: (call: number, real: Db) => Promise<unknown> | undefined): Db & { calls(): number } {
  const real = env.db.database.db;
  let calls = 0;
  return new Proxy(real, {
    get(target, prop, receiver) {
      if (prop === "calls") return () => calls;
      if (prop !== "execute") return Reflect.get(target, prop, receiver);
      return (query: Parameters<Db["execute"]>[0]) => intercept(++calls, real) ?? target.execute(query);
    },
  }) as Db & { calls(): number };
}

/** Resolves once the store's subscribers to `channel` (the hub's handler among them) have had `message`. */
async function heard(kv: KeyValueStore, channel: string, message: string): Promise<void> {
  let got = false;
  const stop = await kv.subscribe!(channel, (m) => (got ||= m === message));
  try {
    await kv.publish(channel, message);
    await waitFor(`${message} on ${channel}`, () => got);
  } finally {
    stop();
  }
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
    const hub = createEventHub({ kv: t.deps.kv, db: () => db, logger, heartbeatMs: 60_000, pollMs: 60_000 });
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

describe("the event hub when a read never returns", () => {
  const never = () => new Promise<never>(() => {});

  it("still delivers everybody else's events while that read hangs", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const [x, y, other] = [await signIn(t, env.issuer), await signIn(t, env.issuer), await signIn(t, env.issuer)];
    // X's first read is stuck (a half-open connection, a lock) for longer than this test runs.
    const db = interceptedDb((call) => (call === 1 ? never() : undefined));
    const kv = t.deps.kv;
    const hub = createEventHub({ kv, db: () => db, logger: createJsonLogger({ level: "silent" }), heartbeatMs: 60_000, pollMs: 60_000, readTimeoutMs: 60_000 });
    const sx = collector(x.id, 0);
    const sy = collector(y.id, 0);
    await hub.add(sx);
    try {
      await waitFor("X's read to begin", () => db.calls() === 1);
      await hub.add(sy);
      const forY = await storeEvent(y, other);
      await kv.publish(eventChannel(y.id), "1");
      await vi.waitFor(() => expect(sy.got).toEqual([forY]), { timeout: 5_000 });
      expect(sx.got).toEqual([]);
    } finally {
      hub.remove(sx);
      hub.remove(sy);
    }
  });

  it("gives up on it at the deadline, logs that, and reads the person's events again", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const [x, other] = [await signIn(t, env.issuer), await signIn(t, env.issuer)];
    const forX = await storeEvent(x, other);
    const db = interceptedDb((call) => (call === 1 ? never() : undefined));
    const { lines, logger } = logCollector();
    // No heartbeat or poll within the test: only the deadline and the retry can bring the event.
    const hub = createEventHub({ kv: t.deps.kv, db: () => db, logger, heartbeatMs: 60_000, pollMs: 60_000, readTimeoutMs: 200 });
    const sx = collector(x.id, 0);
    await hub.add(sx);
    try {
      await vi.waitFor(() => expect(sx.got).toEqual([forX]), { timeout: 5_000 });
      expect(lines.find((l) => l.msg === "reading match events failed; retrying")).toMatchObject({ level: "warn", users: 1, error: { name: "ReadTimeout", message: "no answer within 200 ms" } });
    } finally {
      hub.remove(sx);
    }
  });
  it("reads a person notified during their own slow read once more after it, each event once and in order", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const [x, other] = [await signIn(t, env.issuer), await signIn(t, env.issuer)];
    const first = await storeEvent(x, other);
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    // X's first read answers only once the test lets it (after the second event is stored).
    const db = interceptedDb((call, real) => (call === 1 ? held.then(() => real.execute(sql`select ${x.id}::text as user_id, ${String(first)} as id, 'wink.received' as type, ${JSON.stringify({ userId: other.id })}::jsonb as data`)) : undefined));
    const kv = t.deps.kv;
    const hub = createEventHub({ kv, db: () => db, logger: createJsonLogger({ level: "silent" }), heartbeatMs: 60_000, pollMs: 60_000 });
    const sx = collector(x.id, 0);
    await hub.add(sx);
    try {
      await waitFor("X's first read to begin", () => db.calls() === 1);
      const second = await storeEvent(x, other);
      await heard(kv, eventChannel(x.id), "1");
      release();
      await vi.waitFor(() => expect(sx.got).toEqual([first, second]), { timeout: 5_000 });
      // Nothing more: the next event, notified after all that, is the next thing delivered.
      const third = await storeEvent(x, other);
      await kv.publish(eventChannel(x.id), "1");
      await vi.waitFor(() => expect(sx.got).toHaveLength(3), { timeout: 5_000 });
      expect(sx.got).toEqual([first, second, third]);
    } finally {
      hub.remove(sx);
    }
  });
});
