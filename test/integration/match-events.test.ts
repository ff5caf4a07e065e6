import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { sql } from "drizzle-orm";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KeyValueStore } from "../../src/kv/port";
import { eventChannel } from "../../src/services/matching/events";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, signIn, type Person } from "../support/people";
import { appStore, testRedis, type TestRedis } from "../support/redis";
import { waitFor } from "../support/wait";
import { json } from "../support/users";

const env = useTestEnvironment();

interface Stream {
  status: number;
  contentType: string | null;
  /** The next event; fails after `timeoutMs`. */
  next(timeoutMs?: number): Promise<EventSourceMessage>;
  raw(): string;
  close(): Promise<void>;
}

async function openStream(t: TestApp, who: Person, lastEventId?: string): Promise<Stream> {
  const headers: Record<string, string> = { ...who.headers, accept: "text/event-stream" };
  if (lastEventId !== undefined) headers["last-event-id"] = lastEventId;
  const res = await t.request("/api/v1/matches/events", { headers });
  const queue: EventSourceMessage[] = [];
  const waiters: ((e: EventSourceMessage) => void)[] = [];
  let text = "";
  const parser = createParser({
    onEvent: (event) => {
      const waiter = waiters.shift();
      if (waiter) waiter(event);
      else queue.push(event);
    },
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const pump = (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) return;
      const chunk = decoder.decode(value, { stream: true });
      text += chunk;
      parser.feed(chunk);
    }
  })();
  return {
    status: res.status,
    contentType: res.headers.get("content-type"),
    next(timeoutMs = 2_000) {
      const queued = queue.shift();
      if (queued) return Promise.resolve(queued);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(wrapped), 1);
          reject(new Error(`no event within ${timeoutMs} ms; stream so far: ${JSON.stringify(text)}`));
        }, timeoutMs);
        const wrapped = (e: EventSourceMessage) => {
          clearTimeout(timer);
          resolve(e);
        };
        waiters.push(wrapped);
      });
    },
    raw: () => text,
    async close() {
      await reader.cancel();
      await pump;
    },
  };
}

async function call(res: Promise<Response>): Promise<{ status: number; body: Record<string, any> }> {
  const r = await res;
  return { status: r.status, body: (await r.json()) as Record<string, any> };
}

const swipe = (t: TestApp, from: Person, to: Person) => call(t.request("/api/matching/swipe", json({ targetUserId: to.id, action: "like" }, from.headers)));
const wink = (t: TestApp, from: Person, to: Person) => call(t.request("/api/v1/winks", json({ toUserId: to.id, message: "hey" }, from.headers)));

async function matchUp(t: TestApp, a: Person, b: Person): Promise<string> {
  await swipe(t, a, b);
  const back = await swipe(t, b, a);
  expect(back.body.matched).toBe(true);
  return back.body.matchId as string;
}

const dataOf = (e: EventSourceMessage) => JSON.parse(e.data) as Record<string, unknown>;

/**
 * "Nothing else arrives": someone new winks at `to` and the stream's next event must be that wink,
 * so any event that should not be there would have come first.
 */
async function nextIsMarker(t: TestApp, stream: Stream, to: Person): Promise<void> {
  const marker = await signIn(t, env.issuer);
  await wink(t, marker, to);
  const next = await stream.next();
  expect({ event: next.event, userId: dataOf(next).userId }).toEqual({ event: "wink.received", userId: marker.id });
}

/** Resolves once `subscribers` connections listen to the person's channel on the store. */
const subscribed = (kv: KeyValueStore, userId: string, subscribers: number, timeout?: number) =>
  waitFor(`${subscribers} subscriber(s) to ${userId}'s events`, async () => (await kv.publish(eventChannel(userId), "ping")) === subscribers, { timeout });

describe("match events on one instance", () => {
  let t: TestApp;
  beforeAll(() => {
    t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE });
  });

  it("delivers match.created to both people, with numeric ids", async () => {
    const [a, b] = [await signIn(t, env.issuer), await signIn(t, env.issuer)];
    const [sa, sb] = [await openStream(t, a), await openStream(t, b)];
    try {
      expect(sa.status).toBe(200);
      expect(sa.contentType).toMatch(/^text\/event-stream/);
      const matchId = await matchUp(t, a, b);
      const [ea, eb] = [await sa.next(), await sb.next()];
      expect(ea.event).toBe("match.created");
      expect(ea.id).toMatch(/^\d+$/);
      expect(dataOf(ea)).toEqual({ matchId, userId: b.id, createdAt: expect.any(String) });
      expect(eb.event).toBe("match.created");
      expect(dataOf(eb)).toEqual({ matchId, userId: a.id, createdAt: expect.any(String) });
    } finally {
      await Promise.all([sa.close(), sb.close()]);
    }
  });

  it("delivers wink.received to the recipient and wink.accepted to the sender", async () => {
    const [a, b] = [await signIn(t, env.issuer), await signIn(t, env.issuer)];
    const [sa, sb] = [await openStream(t, a), await openStream(t, b)];
    try {
      const sent = await wink(t, a, b);
      const got = await sb.next();
      expect(got.event).toBe("wink.received");
      expect(dataOf(got)).toEqual({ winkId: sent.body.winkId, userId: a.id, message: "hey", createdAt: expect.any(String) });

      const accepted = await call(t.request(`/api/v1/winks/${sent.body.winkId}/accept`, { method: "POST", headers: b.headers }));
      const forA = [await sa.next(), await sa.next()];
      expect(forA.map((e) => e.event).sort()).toEqual(["match.created", "wink.accepted"]);
      expect(dataOf(forA.find((e) => e.event === "wink.accepted")!)).toEqual({ winkId: sent.body.winkId, matchId: accepted.body.matchId, userId: b.id, createdAt: expect.any(String) });
      expect((await sb.next()).event).toBe("match.created");
      // Ids only grow.
      expect(Number(forA[1]!.id)).toBeGreaterThan(Number(forA[0]!.id));
    } finally {
      await Promise.all([sa.close(), sb.close()]);
    }
  });

  it("replays exactly the missed events after Last-Event-ID", async () => {
    const [me, x, y, z] = [await signIn(t, env.issuer), await signIn(t, env.issuer), await signIn(t, env.issuer), await signIn(t, env.issuer)];
    const first = await openStream(t, me);
    await wink(t, x, me);
    const seen = await first.next();
    await first.close();

    // Missed while disconnected: two winks and a match.
    await wink(t, y, me);
    await wink(t, z, me);
    const matchId = await matchUp(t, me, x);

    const again = await openStream(t, me, seen.id);
    try {
      const replayed = [await again.next(), await again.next(), await again.next()];
      expect(replayed.map((e) => e.event)).toEqual(["wink.received", "wink.received", "match.created"]);
      expect(replayed.map((e) => dataOf(e).userId)).toEqual([y.id, z.id, x.id]);
      expect(dataOf(replayed[2]!).matchId).toBe(matchId);
      // And it goes on live after the replay, with nothing else between.
      const w = await signIn(t, env.issuer);
      await wink(t, w, me);
      expect(dataOf(await again.next()).userId).toBe(w.id);
    } finally {
      await again.close();
    }
    // Without Last-Event-ID, nothing old is replayed.
    const fresh = await openStream(t, me);
    try {
      await nextIsMarker(t, fresh, me);
    } finally {
      await fresh.close();
    }
  });

  it("refuses a malformed Last-Event-ID and needs a token", async () => {
    const me = await signIn(t, env.issuer);
    const bad = await t.request("/api/v1/matches/events", { headers: { ...me.headers, "last-event-id": "abc" } });
    expect(bad.status).toBe(400);
    expect((await t.request("/api/v1/matches/events")).status).toBe(401);
  });

  it("ends the stream and drops its subscription when the client goes away", async () => {
    const me = await signIn(t, env.issuer);
    const stream = await openStream(t, me);
    await subscribed(t.deps.kv, me.id, 1);
    await stream.close();
    await subscribed(t.deps.kv, me.id, 0);
    expect(stream.raw()).toContain(": connected");
  });

  it("on a real Node server, streams and lets go when the client disconnects", async () => {
    const server = serve({ fetch: t.app.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    const { port } = server.address() as AddressInfo;
    const [p, q] = [await signIn(t, env.issuer), await signIn(t, env.issuer)];
    const abort = new AbortController();
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/matches/events`, { headers: q.headers, signal: abort.signal });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-request-id")).toBeTruthy();
      const reader = res.body!.getReader();
      let text = "";
      await wink(t, p, q);
      const deadline = Date.now() + 2_000;
      while (!text.includes("event: wink.received") && Date.now() < deadline) text += new TextDecoder().decode((await reader.read()).value);
      expect(text).toContain("event: wink.received");
      expect(await t.deps.kv.publish(eventChannel(q.id), "ping")).toBe(1);
      abort.abort();
      await reader.cancel().catch(() => {});
      // Let go within a second of the client leaving.
      await subscribed(t.deps.kv, q.id, 0, 1_000);
    } finally {
      // fetch keeps the connection alive for a while; close does not wait for it.
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("hides events about someone a block stands between", async () => {
    const [me, blocked, friend] = [await signIn(t, env.issuer), await signIn(t, env.issuer), await signIn(t, env.issuer)];
    const before = await openStream(t, me);
    await wink(t, blocked, me);
    const missed = await before.next();
    await before.close();
    await env.db.database.db.execute(sql`insert into blocks (blocker_id, blocked_id, created_at) values (${me.id}, ${blocked.id}, now())`);
    await wink(t, friend, me);
    // Replaying from before the first wink: the blocked person's wink is gone, the friend's is there.
    const replay = await openStream(t, me, String(Number(missed.id) - 1));
    try {
      const e = await replay.next();
      expect(dataOf(e).userId).toBe(friend.id);
      await nextIsMarker(t, replay, me);
    } finally {
      await replay.close();
    }
  });
});

describe("HEAD on the event stream", () => {
  it("answers a GET's headers without opening a stream, so nothing is left subscribed or polling", async () => {
    const kv = appStore();
    const channels: string[] = [];
    const subscribe = kv.subscribe!.bind(kv);
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, kv: { ...kv, subscribe: (channel, handler) => (channels.push(channel), subscribe(channel, handler)) } });
    const [me, marker] = [await signIn(t, env.issuer), await signIn(t, env.issuer)];
    const res = await t.request("/api/v1/matches/events", { method: "HEAD", headers: me.headers });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(await res.text()).toBe("");
    // A stream opened after the HEAD subscribes after anything the HEAD would have set going.
    const after = await openStream(t, marker);
    try {
      await subscribed(kv, marker.id, 1);
    } finally {
      await after.close();
    }
    expect(channels).toContain(eventChannel(marker.id));
    expect(channels).not.toContain(eventChannel(me.id));
    expect(await kv.publish(eventChannel(me.id), "anyone?")).toBe(0);
    // A bad Last-Event-ID is refused on HEAD as on GET.
    expect((await t.request("/api/v1/matches/events", { method: "HEAD", headers: { ...me.headers, "last-event-id": "x" } })).status).toBe(400);
  });
});

const withoutSubscribe = (): KeyValueStore => {
  const { subscribe: _omitted, ...rest } = appStore();
  return rest as KeyValueStore;
};

describe("match events where the store cannot subscribe", () => {
  const refusingSubscribe = (): KeyValueStore => ({ ...appStore(), subscribe: () => Promise.reject(new Error("subscribe refused")) });
  it.each([
    { store: "has no subscribe (Upstash on Workers)", kv: withoutSubscribe, failureLogged: false },
    { store: "refuses the subscription (the hub on Node falls back)", kv: refusingSubscribe, failureLogged: true },
  ])("polls the outbox and still delivers when the store $store", async ({ kv, failureLogged }) => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, kv: kv() });
    const [p, q] = [await signIn(t, env.issuer), await signIn(t, env.issuer)];
    const stream = await openStream(t, q);
    try {
      await wink(t, p, q);
      const e = await stream.next(3_000);
      expect(e.event).toBe("wink.received");
      const failure = expect.objectContaining({ level: "warn", msg: "event subscription failed; polling the outbox", userId: q.id });
      if (failureLogged) expect(t.logs).toContainEqual(failure);
      else expect(t.logs).not.toContainEqual(failure);
    } finally {
      await stream.close();
    }
  });
});

describe("event streams when the process stops", () => {
  /** Reads the rest of a response's body; fails if it has not ended within `ms`. */
  async function untilEnd(res: Response, ms = 2_000, progress: (text: string) => void = () => {}): Promise<string> {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const deadline = Date.now() + ms;
    for (;;) {
      const left = deadline - Date.now();
      const next = await Promise.race([reader.read(), new Promise<"late">((r) => setTimeout(() => r("late"), Math.max(0, left)))]);
      if (next === "late") throw new Error(`the stream had not ended within ${ms} ms: ${JSON.stringify(text)}`);
      if (next.done) return text;
      text += decoder.decode(next.value, { stream: true });
      progress(text);
    }
  }
  it.each([
    { path: "the event hub", kv: appStore },
    { path: "a polling stream", kv: withoutSubscribe },
  ])("ends every open stream on $path, lets go of its subscription, and ends a stream asked for afterwards at once", async ({ kv }) => {
    const stopping = new AbortController();
    const store = kv();
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, kv: store, deps: { stopping: stopping.signal } });
    const [p, q] = [await signIn(t, env.issuer), await signIn(t, env.issuer)];
    const open = await Promise.all([p, p, q].map((who) => t.request("/api/v1/matches/events", { headers: who.headers })));
    const texts = open.map(() => "");
    const ended = open.map((res, i) => untilEnd(res, 2_000, (text) => (texts[i] = text)));
    await waitFor("every stream connected", () => texts.every((text) => text.includes(": connected")));
    stopping.abort();
    for (const text of await Promise.all(ended)) expect(text).toMatch(/^retry: 2000\n: connected\n\n/);
    if (store.subscribe) await subscribed(store, p.id, 0);
    const late = await t.request("/api/v1/matches/events", { headers: p.headers });
    expect(late.status).toBe(200);
    expect(await untilEnd(late)).toBe("retry: 2000\n\n");
  });
});

describe("a polling event stream whose read fails", () => {
  it("ends without sending the error, and logs the query without its bound values and with the driver's cause", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, kv: withoutSubscribe() });
    const me = await signIn(t, env.issuer);
    const res = await t.request("/api/v1/matches/events", { headers: { ...me.headers, accept: "text/event-stream" } });
    expect(res.status).toBe(200);
    const requestId = res.headers.get("x-request-id");
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes(": connected")) text += decoder.decode((await reader.read()).value, { stream: true });
    // The next poll finds no table (this file's own database; put back below).
    await env.db.database.db.execute(sql`alter table events rename to events_away`);
    let ended = false;
    try {
      const deadline = Date.now() + 5_000;
      while (Date.now() < deadline) {
        const { done, value } = await reader.read();
        if (done) {
          ended = true;
          break;
        }
        text += decoder.decode(value, { stream: true });
      }
    } finally {
      await env.db.database.db.execute(sql`alter table events_away rename to events`);
    }
    expect(ended).toBe(true);
    expect(text).toBe(`retry: 2000\n: connected\n\n: error ${requestId}\n\n`);
    const logged = t.logs.find((l) => l.msg === "match event stream failed");
    expect(logged).toMatchObject({ level: "error", requestId, userId: me.id });
    const error = logged?.error as { message: string; stack: string; cause: { message: string; code: string } };
    expect(error.message).toContain("Failed query: select e.id::text as id");
    expect(error.message).toContain("params: (not logged)");
    expect(JSON.stringify(error)).not.toContain(me.id);
    expect(error.cause).toMatchObject({ message: 'relation "events" does not exist', code: "42P01" });
  });
});

describe("match events across instances (one Postgres, one Redis)", () => {
  let redis: TestRedis;
  let a: TestApp;
  let b: TestApp;
  let kvA: KeyValueStore;
  beforeAll(() => {
    redis = testRedis();
    kvA = redis.store();
    a = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, kv: kvA });
    b = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, kv: redis.store() });
  });
  afterAll(async () => {
    await redis?.cleanup();
  });

  it("delivers an event made on instance A to a stream on instance B within 2 s", async () => {
    const [p, q] = [await signIn(a, env.issuer), await signIn(a, env.issuer)];
    const onB = await openStream(b, q);
    try {
      await subscribed(a.deps.kv, q.id, 1);
      const started = Date.now();
      await swipe(a, p, q);
      await swipe(a, q, p);
      const e = await onB.next(2_000);
      expect(e.event).toBe("match.created");
      expect(dataOf(e).userId).toBe(p.id);
      expect(Date.now() - started).toBeLessThan(2_000);
      const sent = await wink(a, (await signIn(a, env.issuer)), q);
      expect(dataOf(await onB.next(2_000)).winkId).toBe(sent.body.winkId);
    } finally {
      await onB.close();
    }
  });
});
