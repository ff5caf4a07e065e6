import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "../../src/db/rows";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, signIn, type Person } from "../support/people";
import { json } from "../support/users";

const env = useTestEnvironment();
let t: TestApp;
// The wall clock, which a test moves forward where it needs distinct times instead of waiting.
let skewMs = 0;
const clock = { now: () => Date.now() + skewMs };

beforeAll(() => {
  t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock });
});

const person = (): Promise<Person> => signIn(t, env.issuer);

async function call(res: Promise<Response>): Promise<{ status: number; body: Record<string, any> }> {
  const r = await res;
  const text = await r.text();
  return { status: r.status, body: text ? (JSON.parse(text) as Record<string, any>) : {} };
}

const swipe = (from: Person, targetUserId: string, action: string) => call(t.request("/api/matching/swipe", json({ targetUserId, action }, from.headers)));
const wink = (from: Person, toUserId: string, message?: string) => call(t.request("/api/v1/winks", json(message === undefined ? { toUserId } : { toUserId, message }, from.headers)));
const accept = (who: Person, winkId: string) => call(t.request(`/api/v1/winks/${winkId}/accept`, { method: "POST", headers: who.headers }));
const decline = (who: Person, winkId: string) => call(t.request(`/api/v1/winks/${winkId}/decline`, { method: "POST", headers: who.headers }));
const received = (who: Person) => call(t.request("/api/v1/winks/received", { headers: who.headers }));
const matches = (who: Person, query = "") => call(t.request(`/api/v1/matches${query}`, { headers: who.headers }));
const unmatch = (who: Person, matchId: string) => call(t.request(`/api/v1/matches/${matchId}`, { method: "DELETE", headers: who.headers }));

async function block(blocker: Person, blocked: Person): Promise<void> {
  await env.db.database.db.execute(sql`insert into blocks (blocker_id, blocked_id, created_at) values (${blocker.id}, ${blocked.id}, now())`);
}

async function giveProfile(p: Person, name: string): Promise<void> {
  await env.db.database.db.execute(
    sql`insert into profiles (user_id, display_name, birth_date, gender, interested_in, city, created_at, updated_at, last_active_at)
        values (${p.id}, ${name}, '1995-06-15', 'woman', '{man}', 'Lisbon', now(), now(), now())`,
  );
}

async function matchCount(a: string, b: string): Promise<number> {
  const [low, high] = a < b ? [a, b] : [b, a];
  const [row] = await queryRows<{ n: string }>(env.db.database.db, sql`select count(*)::text as n from matches where user_low = ${low} and user_high = ${high}`);
  return Number(row?.n);
}

describe("swipes", () => {
  it("matches on a like back, once, and tells both sides", async () => {
    const [a, b] = [await person(), await person()];
    expect(await swipe(a, b.id, "like")).toEqual({ status: 200, body: { action: "like", matched: false } });
    const back = await swipe(b, a.id, "like");
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ action: "like", matched: true, matchId: expect.stringMatching(/^mat_/) });
    expect(await matchCount(a.id, b.id)).toBe(1);
    const listA = await matches(a);
    const listB = await matches(b);
    expect(listA.body.matches).toEqual([{ matchId: back.body.matchId, userId: b.id, createdAt: expect.any(String), profile: null }]);
    expect(listB.body.matches).toEqual([{ matchId: back.body.matchId, userId: a.id, createdAt: expect.any(String), profile: null }]);
  });

  it("does not match on a pass, and answers a repeated swipe with 409", async () => {
    const [a, b] = [await person(), await person()];
    expect((await swipe(a, b.id, "like")).status).toBe(200);
    expect(await swipe(b, a.id, "pass")).toEqual({ status: 200, body: { action: "pass", matched: false } });
    const again = await swipe(a, b.id, "pass");
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: "conflict", code: 409 });
    expect(await matchCount(a.id, b.id)).toBe(0);
  });

  it("refuses swiping at yourself (400), unknown people (404) and bad input (400)", async () => {
    const a = await person();
    expect((await swipe(a, a.id, "like")).body).toMatchObject({ error: "invalid_input", code: 400 });
    expect((await swipe(a, "usr_nobody", "like")).status).toBe(404);
    const bad = await swipe(a, "usr_x", "superlike");
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].path).toBe("action");
  });

  it("a wink swipe sends a wink; a like back on it makes the match and settles the wink", async () => {
    const [a, b] = [await person(), await person()];
    const sent = await swipe(a, b.id, "wink");
    expect(sent.body).toMatchObject({ action: "wink", matched: false, winkId: expect.stringMatching(/^wnk_/) });
    expect((await received(b)).body).toMatchObject({ count: 1, winks: [{ winkId: sent.body.winkId, fromUserId: a.id, status: "pending" }] });
    const back = await swipe(b, a.id, "like");
    expect(back.body).toMatchObject({ matched: true });
    expect((await received(b)).body).toEqual({ winks: [], count: 0 });
    expect((await accept(b, sent.body.winkId)).status).toBe(409);
  });

  it("treats a block either way as if the person did not exist", async () => {
    const [a, b, c] = [await person(), await person(), await person()];
    await block(a, b);
    await block(c, a);
    expect((await swipe(a, b.id, "like")).status).toBe(404);
    expect((await swipe(b, a.id, "like")).status).toBe(404);
    expect((await swipe(a, c.id, "like")).status).toBe(404);
    expect((await wink(a, c.id)).status).toBe(404);
    expect((await wink(b, a.id)).status).toBe(404);
  });
});

describe("winks", () => {
  it("sends, lists (pending only) and accepts into a match", async () => {
    const [a, b] = [await person(), await person()];
    await giveProfile(a, "Ana");
    const sent = await wink(a, b.id, "hi there");
    expect(sent.status).toBe(201);
    expect(sent.body).toMatchObject({ winkId: expect.stringMatching(/^wnk_/), status: "pending", toUserId: b.id, message: "hi there", remainingToday: null });
    const inbox = await received(b);
    expect(inbox.status).toBe(200);
    expect(inbox.body.count).toBe(1);
    expect(inbox.body.winks[0]).toMatchObject({ winkId: sent.body.winkId, fromUserId: a.id, message: "hi there", profile: { userId: a.id, displayName: "Ana", city: "Lisbon" } });
    expect((await received(a)).body).toEqual({ winks: [], count: 0 });

    const ok = await accept(b, sent.body.winkId);
    expect(ok).toEqual({ status: 200, body: { winkId: sent.body.winkId, status: "accepted", matchId: expect.stringMatching(/^mat_/) } });
    expect((await received(b)).body.count).toBe(0);
    expect((await matches(b)).body.matches).toEqual([
      { matchId: ok.body.matchId, userId: a.id, createdAt: expect.any(String), profile: expect.objectContaining({ displayName: "Ana", age: expect.any(Number) }) },
    ]);
    // Matched already: no further wink, and acting again on the wink is a state clash.
    expect((await wink(a, b.id)).status).toBe(409);
    expect((await accept(b, sent.body.winkId)).status).toBe(409);
    expect((await decline(b, sent.body.winkId)).status).toBe(409);
  });

  it("declines; a second pending wink to the same person is a 409, a new one after decline is fine", async () => {
    const [a, b] = [await person(), await person()];
    const first = await wink(a, b.id);
    const dup = await wink(a, b.id);
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ error: "conflict", code: 409 });
    expect(await decline(b, first.body.winkId)).toEqual({ status: 200, body: { winkId: first.body.winkId, status: "declined" } });
    expect((await accept(b, first.body.winkId)).status).toBe(409);
    expect((await wink(a, b.id)).status).toBe(201);
    expect(await matchCount(a.id, b.id)).toBe(0);
  });

  it("lets only the recipient act: the sender and strangers get 404", async () => {
    const [a, b, stranger] = [await person(), await person(), await person()];
    const sent = await wink(a, b.id);
    for (const who of [a, stranger]) {
      expect((await accept(who, sent.body.winkId)).body).toMatchObject({ error: "not_found", code: 404 });
      expect((await decline(who, sent.body.winkId)).status).toBe(404);
    }
    expect((await accept(b, "wnk_doesnotexist")).status).toBe(404);
    expect((await accept(b, "bad%20id")).status).toBe(400);
    expect((await received(b)).body.count).toBe(1);
  });

  it("refuses winking at yourself and validates the body", async () => {
    const a = await person();
    expect((await wink(a, a.id)).status).toBe(400);
    expect((await call(t.request("/api/v1/winks", json({ toUserId: a.id, extra: 1 }, a.headers)))).status).toBe(400);
    expect((await wink(a, "usr_nobody")).status).toBe(404);
  });

  it("hides winks behind a block, and the recipient can no longer act on them", async () => {
    const [a, b] = [await person(), await person()];
    const sent = await wink(a, b.id);
    await block(b, a);
    expect((await received(b)).body).toEqual({ winks: [], count: 0 });
    expect((await accept(b, sent.body.winkId)).status).toBe(404);
  });
});

describe("matches", () => {
  async function matched(a: Person, b: Person): Promise<string> {
    await swipe(a, b.id, "like");
    const back = await swipe(b, a.id, "like");
    expect(back.body.matched).toBe(true);
    return back.body.matchId as string;
  }

  it("pages newest first with a cursor", async () => {
    const me = await person();
    const others = [await person(), await person(), await person()];
    const ids: string[] = [];
    for (const o of others) {
      ids.push(await matched(me, o));
      skewMs += 1_000;
    }
    const first = await matches(me, "?limit=2");
    expect(first.body.matches.map((m: { matchId: string }) => m.matchId)).toEqual([ids[2], ids[1]]);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await matches(me, `?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.matches.map((m: { matchId: string }) => m.matchId)).toEqual([ids[0]]);
    expect(second.body.nextCursor).toBeNull();
    expect((await matches(me, "?cursor=garbage")).status).toBe(400);
    // Well formed, but past year 9999 (where the ISO form Postgres reads ends): 400, not 500.
    for (const ms of ["253402300800000", "999999999999999"]) {
      const beyond = btoa(`${ms}.mat_x`).replace(/=+$/, "");
      expect((await matches(me, `?cursor=${beyond}`)).status, ms).toBe(400);
    }
  });

  it("unmatches for both sides; someone else's match is 404", async () => {
    const [a, b, stranger] = [await person(), await person(), await person()];
    const matchId = await matched(a, b);
    expect((await unmatch(stranger, matchId)).body).toMatchObject({ error: "not_found", code: 404 });
    expect((await unmatch(a, "mat_nothing")).status).toBe(404);
    expect((await matches(a)).body.matches).toHaveLength(1);
    expect((await unmatch(b, matchId)).status).toBe(204);
    expect((await matches(a)).body.matches).toEqual([]);
    expect((await matches(b)).body.matches).toEqual([]);
    expect((await unmatch(a, matchId)).status).toBe(404);
  });

  it("a hidden member cannot be liked or winked: the same 404 as someone who does not exist", async () => {
    const [me, hidden] = [await person(), await person()];
    await giveProfile(hidden, "Dave");
    await env.db.database.db.execute(sql`update profiles set visibility = 'hidden' where user_id = ${hidden.id}`);
    const unknown = await swipe(me, "usr_00000000000000000000000000", "like");
    expect(unknown.status).toBe(404);
    for (const attempt of [await swipe(me, hidden.id, "like"), await swipe(me, hidden.id, "wink"), await wink(me, hidden.id)]) {
      expect(attempt.status).toBe(404);
      expect(attempt.body.message).toBe(unknown.body.message);
    }
    // Visible again: reachable again.
    await env.db.database.db.execute(sql`update profiles set visibility = 'visible' where user_id = ${hidden.id}`);
    expect((await swipe(me, hidden.id, "like")).status).toBe(200);
  });

  it("an unmatch sticks: the other's later like does not bring the match back alone", async () => {
    const [alice, carol] = [await person(), await person()];
    const sent = await wink(carol, alice.id);
    const liked = await swipe(alice, carol.id, "like");
    expect(liked.body).toMatchObject({ matched: true });
    expect(sent.status).toBe(201);
    expect((await unmatch(alice, liked.body.matchId)).status).toBe(204);
    // Alice's like predates the unmatch, so Carol's like finds no interest.
    expect((await swipe(carol, alice.id, "like")).body).toEqual({ action: "like", matched: false });
    expect((await matches(alice)).body.matches).toEqual([]);
    expect((await matches(carol)).body.matches).toEqual([]);
    // Both acting anew (a new wink, accepted) is a new start.
    const again = await wink(carol, alice.id);
    expect(again.status).toBe(201);
    expect((await accept(alice, again.body.winkId)).status).toBe(200);
    expect((await matches(alice)).body.matches).toHaveLength(1);
  });

  it("hides a match behind a block, and it cannot be acted on", async () => {
    const [a, b] = [await person(), await person()];
    const matchId = await matched(a, b);
    await block(a, b);
    expect((await matches(a)).body.matches).toEqual([]);
    expect((await matches(b)).body.matches).toEqual([]);
    expect((await unmatch(b, matchId)).status).toBe(404);
  });
});
