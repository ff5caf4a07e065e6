import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import type { Database } from "../../src/db/port";
import type { KeyValueStore } from "../../src/kv/port";
import { fixedClock } from "../../src/platform/clock";
import { HEARTBEAT_MS } from "../../src/services/matching/event-streams";
import { releaseStreamSlot, renewStreamSlot, STREAM_LEASE_MS, STREAMS_PER_PERSON, takeStreamSlot } from "../../src/services/matching/stream-slots";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { useEveryStore } from "../support/every-store";
import { signIn, type Person } from "../support/people";
import { appStore, testRedis } from "../support/redis";
import { waitFor } from "../support/wait";

const env = useTestEnvironment();
const onEveryStore = useEveryStore();
const redis = testRedis();
afterAll(() => redis.cleanup());
afterEach(() => vi.useRealTimers());

const T0 = Date.parse("2026-05-05T08:00:00Z");

const withoutSubscribe = (): KeyValueStore => {
  const { subscribe: _omitted, ...rest } = appStore();
  return rest as KeyValueStore;
};

/** The test database, counting the sessions held open (a polling stream holds one of its own). */
function countingDatabase(): { database: Database; held: () => number } {
  const real = env.db.database;
  let held = 0;
  const database: Database = {
    driver: real.driver,
    session() {
      const session = real.session();
      held += 1;
      let released = false;
      return {
        db: session.db,
        release: async () => {
          if (!released) {
            released = true;
            held -= 1;
          }
          await session.release?.();
        },
      };
    },
    close: () => real.close(),
  };
  return { database, held: () => held };
}

interface Open {
  res: Response;
  close(): Promise<void>;
}

async function openStream(t: TestApp, who: Person): Promise<Open> {
  const res = await t.request("/api/v1/matches/events", { headers: who.headers });
  if (res.status !== 200) return { res, close: async () => {} };
  const reader = res.body!.getReader();
  // The opening lines: the stream is registered once they are out.
  await reader.read();
  return { res, close: () => reader.cancel() };
}

describe("the event stream slot script", () => {
  it("holds five leases per person, frees them on release or after the lease, and renews only a held one, alike on every store", async () => {
    const results = await onEveryStore(async (kv) => {
      const out: unknown[] = [];
      const take = async (member: string, now: number) => out.push([member, await takeStreamSlot(kv, "usr_a", member, now)]);
      for (const m of ["m1", "m2", "m3", "m4", "m5"]) await take(m, T0);
      await take("m6", T0 + 10_000);
      // Another person's places are their own.
      out.push(["other", await takeStreamSlot(kv, "usr_b", "m1", T0 + 10_000)]);
      await releaseStreamSlot(kv, "usr_a", "m1");
      await take("m6", T0 + 10_000);
      out.push(["renew m2", await renewStreamSlot(kv, "usr_a", "m2", T0 + 50_000)]);
      out.push(["renew released m1", await renewStreamSlot(kv, "usr_a", "m1", T0 + 50_000)]);
      // m3–m5 were never renewed: their leases ended at T0 + 60 s; m2 and m6 still hold theirs.
      for (const m of ["m7", "m8", "m9", "m10"]) await take(m, T0 + 61_000);
      return out;
    });
    expect(results.memory).toEqual([
      ["m1", { granted: true }],
      ["m2", { granted: true }],
      ["m3", { granted: true }],
      ["m4", { granted: true }],
      ["m5", { granted: true }],
      // The oldest lease would lapse at T0 + 60 s.
      ["m6", { granted: false, retryAfter: 50 }],
      ["other", { granted: true }],
      ["m6", { granted: true }],
      ["renew m2", true],
      ["renew released m1", false],
      ["m7", { granted: true }],
      ["m8", { granted: true }],
      ["m9", { granted: true }],
      // Full again; m6's lease (T0 + 70 s) is the first to end.
      ["m10", { granted: false, retryAfter: 9 }],
    ]);
    expect(results.redis).toEqual(results.memory);
    expect(results.upstash).toEqual(results.memory);
    expect(STREAMS_PER_PERSON).toBe(5);
    expect(STREAM_LEASE_MS).toBe(60_000);
  });
});

describe("open event streams per person", () => {
  it("answers the sixth 429 in shape 1 with retry_after and Retry-After, before it takes a database session, and lets a new one in once one closes", async () => {
    const clock = fixedClock(Date.now());
    const { database, held } = countingDatabase();
    // Standard tier, and the store of Workers: every stream polls on a session of its own.
    const t = buildTestApp({ database, issuer: env.issuer, clock, kv: withoutSubscribe() });
    const me = await signIn(t, env.issuer);
    const streams = [];
    for (let i = 0; i < 5; i++) streams.push(await openStream(t, me));
    expect(streams.map((s) => s.res.status)).toEqual([200, 200, 200, 200, 200]);
    const sessions = held();
    expect(sessions).toBeGreaterThanOrEqual(5);

    const sixth = await t.request("/api/v1/matches/events", { headers: me.headers });
    expect(sixth.status).toBe(429);
    expect(sixth.headers.get("retry-after")).toBe("60");
    expect(sixth.headers.get("x-ratelimit-limit")).toBe("1000");
    expect(await sixth.json()).toEqual({
      error: "rate_limit_exceeded",
      message: "too many open event streams: at most 5 per person",
      code: 429,
      retry_after: 60,
      requestId: sixth.headers.get("x-request-id"),
    });
    expect(held()).toBe(sessions);
    // Someone else is not held back by it.
    const other = await openStream(t, await signIn(t, env.issuer));
    expect(other.res.status).toBe(200);

    await streams[0]!.close();
    await vi.waitFor(async () => {
      const next = await openStream(t, me);
      streams.push(next);
      expect(next.res.status).toBe(200);
    }, { timeout: 5_000 });
    await Promise.all([...streams, other].map((s) => s.close()));
  });

  it("counts a person's streams across instances sharing one store", async () => {
    const a = buildTestApp({ database: env.db.database, issuer: env.issuer, kv: redis.store() });
    const b = buildTestApp({ database: env.db.database, issuer: env.issuer, kv: redis.store() });
    const me = await signIn(a, env.issuer);
    const streams = [];
    for (const t of [a, a, a, b, b]) streams.push(await openStream(t, me));
    expect(streams.map((s) => s.res.status)).toEqual([200, 200, 200, 200, 200]);
    expect((await a.request("/api/v1/matches/events", { headers: me.headers })).status).toBe(429);
    expect((await b.request("/api/v1/matches/events", { headers: me.headers })).status).toBe(429);
    // A stream closed on B frees a place for A.
    await streams[4]!.close();
    await vi.waitFor(async () => {
      const next = await openStream(a, me);
      streams.push(next);
      expect(next.res.status).toBe(200);
    }, { timeout: 5_000 });
    await Promise.all(streams.map((s) => s.close()));
  });

  it.each([
    { path: "the event hub", kv: appStore },
    { path: "a polling stream", kv: withoutSubscribe },
  ])("keeps a live stream's place past its first lease by renewing it on each heartbeat ($path)", async ({ kv }) => {
    // Only the heartbeat intervals run on the fake clock; database and store I/O stay real.
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const clock = fixedClock(Date.now());
    const store = kv();
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, clock, kv: store });
    const me = await signIn(t, env.issuer);
    const streams = [];
    for (let i = 0; i < 5; i++) streams.push(await openStream(t, me));
    expect(streams.map((s) => s.res.status)).toEqual([200, 200, 200, 200, 200]);
    clock.advance(STREAM_LEASE_MS - 10_000);
    vi.advanceTimersByTime(HEARTBEAT_MS);
    // The renewals are store calls the heartbeat starts and does not wait for.
    const renewedUntil = clock.now() + STREAM_LEASE_MS;
    await waitFor("five renewed leases", async () => (await store.zrevrangeWithScores(`events:streams:${me.id}`, 0, -1)).filter((l) => l.score === renewedUntil).length === 5);
    // Past the first lease, within the renewed one: still five streams open.
    clock.advance(30_000);
    const sixth = await t.request("/api/v1/matches/events", { headers: me.headers });
    expect(sixth.status).toBe(429);
    // Their leases now end 60 s after the renewal.
    expect((await sixth.json()) as Record<string, unknown>).toMatchObject({ retry_after: 30 });
    await Promise.all(streams.map((s) => s.close()));
  });
});
