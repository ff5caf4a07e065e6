import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "../../src/db/rows";
import { buildTestApp, fixedClock, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, signIn, type Person } from "../support/people";
import { json } from "../support/users";

// Real Postgres: requests of one app race on the same pairs and the same daily counter.

const env = useTestEnvironment();

const app = (options: { standard?: boolean; clock?: ReturnType<typeof fixedClock> } = {}): TestApp =>
  buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: options.standard ? undefined : ENTERPRISE, clock: options.clock });

async function call(res: Promise<Response>): Promise<{ status: number; body: Record<string, any> }> {
  const r = await res;
  return { status: r.status, body: (await r.json()) as Record<string, any> };
}

const swipe = (t: TestApp, from: Person, targetUserId: string, action = "like") => call(t.request("/api/matching/swipe", json({ targetUserId, action }, from.headers)));

async function matchesOf(a: string, b: string): Promise<{ id: string }[]> {
  const [low, high] = a < b ? [a, b] : [b, a];
  return queryRows<{ id: string }>(env.db.database.db, sql`select id from matches where user_low = ${low} and user_high = ${high}`);
}

async function eventsOf(userId: string, type: string): Promise<number> {
  const [row] = await queryRows<{ n: string }>(env.db.database.db, sql`select count(*)::text as n from events where user_id = ${userId} and type = ${type}`);
  return Number(row?.n);
}

function countBy<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[key(item)] = (out[key(item)] ?? 0) + 1;
  return out;
}

describe("matching under concurrency", () => {
  it("makes exactly one match per pair when 20 pairs like each other at the same instant", async () => {
    const t = app();
    const pairs: [Person, Person][] = [];
    for (let i = 0; i < 20; i++) pairs.push(await Promise.all([signIn(t, env.issuer), signIn(t, env.issuer)]));

    const results = await Promise.all(pairs.flatMap(([a, b]) => [swipe(t, a, b.id), swipe(t, b, a.id)]));
    expect(results.every((r) => r.status === 200)).toBe(true);

    for (let i = 0; i < pairs.length; i++) {
      const [a, b] = pairs[i]!;
      const rows = await matchesOf(a.id, b.id);
      expect(rows).toHaveLength(1);
      const answers = [results[2 * i]!, results[2 * i + 1]!];
      // Exactly one of the two likes saw the other: it made the match and names it.
      expect(answers.filter((r) => r.body.matched)).toEqual([{ status: 200, body: { action: "like", matched: true, matchId: rows[0]!.id } }]);
      expect(await eventsOf(a.id, "match.created")).toBe(1);
      expect(await eventsOf(b.id, "match.created")).toBe(1);
    }
  });

  it("makes one match when an accept races a mutual like", async () => {
    const t = app();
    for (let round = 0; round < 5; round++) {
      const [a, b] = await Promise.all([signIn(t, env.issuer), signIn(t, env.issuer)]);
      const sent = await call(t.request("/api/v1/winks", json({ toUserId: b.id }, a.headers)));
      expect(sent.status).toBe(201);
      const [accepted, likeA, likeB] = await Promise.all([
        call(t.request(`/api/v1/winks/${sent.body.winkId}/accept`, { method: "POST", headers: b.headers })),
        swipe(t, a, b.id),
        swipe(t, b, a.id),
      ]);
      const rows = await matchesOf(a.id, b.id);
      expect(rows).toHaveLength(1);
      const matchId = rows[0]!.id;
      // The accept either won (and made the match) or found the wink settled by the match.
      if (accepted.status === 200) expect(accepted.body).toEqual({ winkId: sent.body.winkId, status: "accepted", matchId });
      else expect(accepted.status).toBe(409);
      for (const like of [likeA, likeB]) {
        expect(like.status).toBe(200);
        if (like.body.matched) expect(like.body.matchId).toBe(matchId);
      }
      const [wink] = await queryRows<{ status: string; match_id: string }>(env.db.database.db, sql`select status, match_id from winks where id = ${sent.body.winkId}`);
      expect(wink).toEqual({ status: "accepted", match_id: matchId });
      expect(await eventsOf(a.id, "match.created")).toBe(1);
      expect(await eventsOf(b.id, "match.created")).toBe(1);
    }
  });

  it("lets exactly 10 of 11 simultaneous winks from a fresh standard user through", async () => {
    // Frozen at the real present (tokens must verify on the app clock), at a fractional second,
    // so retry_after has to round up to whole seconds.
    const frozen = Math.floor(Date.now() / 1000) * 1000 - 322;
    const day = new Date(frozen);
    const nextMidnight = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() + 1);
    const expected = Math.ceil((nextMidnight - frozen) / 1000);
    const t = app({ standard: true, clock: fixedClock(frozen) });
    const ent = app();
    const sender = await signIn(t, env.issuer);
    const recipients: Person[] = [];
    for (let i = 0; i < 11; i++) recipients.push(await signIn(ent, env.issuer));

    const results = await Promise.all(recipients.map((r) => call(t.request("/api/v1/winks", json({ toUserId: r.id }, sender.headers)))));
    expect(countBy(results, (r) => String(r.status))).toEqual({ "201": 10, "429": 1 });
    const refused = results.find((r) => r.status === 429)!;
    expect(refused.body).toMatchObject({ error: "rate_limit_exceeded", code: 429, retry_after: expected });
    // One value a client can parse, not the same header written twice ("N, N").
    const twelfth = await signIn(ent, env.issuer);
    const again = await t.request("/api/v1/winks", json({ toUserId: twelfth.id }, sender.headers));
    expect(again.status).toBe(429);
    expect(again.headers.get("retry-after")).toBe(String(expected));
    expect(results.filter((r) => r.status === 201).map((r) => r.body.remainingToday).sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);

    const [count] = await queryRows<{ count: number }>(env.db.database.db, sql`select count from wink_daily_counts where user_id = ${sender.id}`);
    expect(count?.count).toBe(10);
    const [winks] = await queryRows<{ n: string }>(env.db.database.db, sql`select count(*)::text as n from winks where sender_id = ${sender.id}`);
    expect(Number(winks?.n)).toBe(10);
  });

  it("answers 409 to a second pending wink to the same person, even sent at once, without using up the cap", async () => {
    const t = app({ standard: true });
    const sender = await signIn(t, env.issuer);
    const recipient = await signIn(t, env.issuer);
    const results = await Promise.all(Array.from({ length: 5 }, () => call(t.request("/api/v1/winks", json({ toUserId: recipient.id }, sender.headers)))));
    expect(countBy(results, (r) => String(r.status))).toEqual({ "201": 1, "409": 4 });
    const [count] = await queryRows<{ count: number }>(env.db.database.db, sql`select count from wink_daily_counts where user_id = ${sender.id}`);
    expect(count?.count).toBe(1);
  });
});
