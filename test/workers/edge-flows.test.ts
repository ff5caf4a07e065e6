import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { createWorker } from "../../workers/api";
import { accessToken } from "./access-token";
import { workerBindings } from "./bindings";
import { waitFor } from "../support/wait";

// The platform's own flows on the Workers runtime, with what production has there: tokens checked
// against an OIDC issuer's JWKS, rate limits and feed sessions in Upstash (its REST protocol in
// front of the local Redis), and every query and transaction through the Neon driver (its
// WebSocket proxy in front of the local Postgres). Money and matches are raced here too: the
// Node tests prove the services, these prove that the Workers build keeps the same promises.

const worker = createWorker();
const bindings = workerBindings(env, "edge", JSON.parse(inject("cardAEnv")) as Record<string, string>);


interface Caller {
  id: string;
  headers: Record<string, string>;
}

async function call(path: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; body: Record<string, any> }> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`http://api.test${path}`, init), bindings, ctx);
  const body = (await res.json()) as Record<string, any>;
  await waitOnExecutionContext(ctx);
  return { status: res.status, headers: res.headers, body };
}

const post = (path: string, who: Caller, body: unknown, headers: Record<string, string> = {}) =>
  call(path, { method: "POST", headers: { ...who.headers, "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

/** A new person (or admin), created by their first request as they would be in production. */
async function signIn(options: { admin?: boolean } = {}): Promise<Caller> {
  const sub = `edge-${crypto.randomUUID()}`;
  const token = await accessToken(sub, options.admin ? ["admin"] : []);
  const headers = { authorization: `Bearer ${token}` };
  const me = await call("/v1/auth/test", { headers });
  expect(me.status, JSON.stringify(me.body)).toBe(200);
  return { id: me.body.user.id as string, headers };
}

describe("identity on the Worker", () => {
  it("verifies tokens against the issuer's JWKS and refuses a forged one", async () => {
    const person = await signIn();
    expect(person.id).toMatch(/^usr_/);
    const forged = `${String(person.headers.authorization).slice(0, -8)}AAAAAAAA`;
    const res = await call("/v1/auth/test", { headers: { authorization: forged } });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe("unauthorized");
  });
});

describe("body-less requests on the Worker", () => {
  it("treat a declared Content-Length: 0 as no body, as browsers and wrangler dev send it", async () => {
    const person = await signIn();
    // Over HTTP, workerd gives a request that declares Content-Length: 0 an empty body stream; an
    // empty string body is the same thing built in-process.
    const declaredEmpty = { headers: { ...person.headers, "content-length": "0" }, body: "" };
    for (const init of [{ headers: person.headers }, declaredEmpty]) {
      const unblock = await call(`/api/v1/blocks/usr_${"0".repeat(26)}`, { method: "DELETE", ...init });
      expect(unblock.status, JSON.stringify(unblock.body)).toBe(404);
      const accept = await call("/api/v1/winks/wnk_nothing/accept", { method: "POST", ...init });
      expect(accept.status, JSON.stringify(accept.body)).toBe(404);
    }
    // A body that is there still needs a JSON type.
    const text = await call("/api/v1/winks/wnk_nothing/accept", { method: "POST", headers: { ...person.headers, "content-type": "text/plain" }, body: "hi" });
    expect(text.status).toBe(400);
  });
});

describe("rate limits in Upstash", () => {
  it("lets exactly the standard plan's 100 requests a minute through when 110 arrive at once", async () => {
    const person = await signIn();
    // signIn itself was the first request of this minute.
    const results = await Promise.all(Array.from({ length: 110 }, () => call("/v1/auth/test", { headers: person.headers })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(99);
    expect(statuses.filter((s) => s === 429)).toHaveLength(11);
    const denied = results.find((r) => r.status === 429);
    expect(denied?.body).toMatchObject({ error: "rate_limit_exceeded", code: 429 });
    expect(Number(denied?.headers.get("retry-after"))).toBeGreaterThan(0);
    const remaining = results.filter((r) => r.status === 200).map((r) => Number(r.headers.get("x-ratelimit-remaining")));
    expect(new Set(remaining).size).toBe(99);
    // The counts live in Redis, reached over Upstash's REST protocol, not in the isolate's memory.
    const stored = await fetch(inject("upstashUrl"), {
      method: "POST",
      headers: { authorization: `Bearer ${inject("upstashToken")}` },
      body: JSON.stringify(["KEYS", `${bindings.KV_PREFIX}*`]),
    });
    expect(((await stored.json()) as { result: string[] }).result.length).toBeGreaterThan(0);
  });
});

describe("the wallet through the Neon driver", () => {
  async function funded(coins: number): Promise<{ admin: Caller; payer: Caller }> {
    const [admin, payer] = await Promise.all([signIn({ admin: true }), signIn()]);
    const awarded = await post("/api/v1/wallet/coins/award", admin, { userId: payer.id, amount: coins, reason: "edge test" });
    expect(awarded.status, JSON.stringify(awarded.body)).toBe(200);
    return { admin, payer };
  }

  const balanceOf = async (who: Caller) => (await call("/api/v1/wallet/overview", { headers: who.headers })).body.balance as number;

  it("lets exactly 10 of 16 racing transfers of 10 coins out of a wallet holding 100 through", async () => {
    const { admin, payer } = await funded(100);
    const payees = await Promise.all([signIn(), signIn()]);
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) => post("/api/v1/wallet/transfer", payer, { toUserId: payees[i % 2]!.id, amount: 10 })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);
    expect(results.filter((r) => r.status === 422).map((r) => r.body.error)).toEqual(Array(6).fill("insufficient_funds"));
    expect(await balanceOf(payer)).toBe(0);
    const received = await Promise.all(payees.map(balanceOf));
    expect(received[0]! + received[1]!).toBe(100);
    const supply = await call("/api/v1/admin/coins/mint/state", { headers: admin.headers });
    expect(supply.status).toBe(200);
    expect(supply.body.balanced).toBe(true);
  });

  it("makes one transfer of the same Idempotency-Key fired 8 times at once, and replays its answer", async () => {
    const { payer } = await funded(50);
    const payee = await signIn();
    const key = `edge-${crypto.randomUUID()}`;
    const results = await Promise.all(
      Array.from({ length: 8 }, () => post("/api/v1/wallet/transfer", payer, { toUserId: payee.id, amount: 7 }, { "idempotency-key": key })),
    );
    const done = results.filter((r) => r.status === 200);
    // The first answer, and replays of it; any other request still racing it was told 409.
    expect(done.length).toBeGreaterThan(0);
    for (const r of done) expect(r.body).toEqual({ success: true, balance: 43, transferredAmount: 7 });
    expect(results.filter((r) => r.status !== 200).map((r) => r.status)).toEqual(Array(8 - done.length).fill(409));
    const replay = await post("/api/v1/wallet/transfer", payer, { toUserId: payee.id, amount: 7 }, { "idempotency-key": key });
    expect(replay.body).toEqual({ success: true, balance: 43, transferredAmount: 7 });
    expect(await balanceOf(payer)).toBe(43);
    expect(await balanceOf(payee)).toBe(7);
  });
});

describe("subscriptions paid from the wallet", () => {
  it("charges once for one Idempotency-Key sent twice at once, and the new tier's limits apply", async () => {
    const [admin, buyer] = await Promise.all([signIn({ admin: true }), signIn()]);
    expect((await post("/api/v1/wallet/coins/award", admin, { userId: buyer.id, amount: 600, reason: "edge test" })).status).toBe(200);
    const key = `edge-${crypto.randomUUID()}`;
    const bought = await Promise.all([1, 2].map(() => post("/api/v1/subscriptions", buyer, { planId: "premium" }, { "idempotency-key": key })));
    const done = bought.filter((r) => r.status === 201);
    expect(done.length).toBeGreaterThan(0);
    for (const r of done) expect(r.body).toMatchObject({ planId: "premium", tier: "premium", status: "active", chargedCoins: 500, balance: 100 });
    expect(bought.filter((r) => r.status !== 201).map((r) => r.status)).toEqual(Array(2 - done.length).fill(409));
    const overview = await call("/api/v1/wallet/overview", { headers: buyer.headers });
    expect(overview.body).toMatchObject({ balance: 100, tier: "premium" });
    expect(overview.headers.get("x-ratelimit-limit")).toBe("5000");
  });
});

describe("money in from a payment provider", () => {
  it("credits a card-a order once when its signed webhook arrives five times at once", async () => {
    const payer = await signIn();
    const checkout = await post("/api/payments/card-a/checkout", payer, { amount: 900 });
    expect(checkout.status, JSON.stringify(checkout.body)).toBe(201);
    const id = checkout.body.fundingRequestId as string;
    // The provider's test helper signs the order event as it would send it.
    const made = await fetch(`${String(bindings.CARD_A_API_URL)}/__test/order-webhook`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ fundingRequestId: id }),
    });
    const hook = (await made.json()) as { path: string; body: string; headers: Record<string, string> };
    const deliver = (headers = hook.headers) => call(hook.path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: hook.body });

    expect((await deliver({ ...hook.headers, "x-signature": "0".repeat(64) })).status).toBe(401);
    const results = await Promise.all(Array.from({ length: 5 }, () => deliver()));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(results.map((r) => r.body.result).sort()).toEqual(["credited", "duplicate", "duplicate", "duplicate", "duplicate"]);
    expect((await call(`/api/payments/${id}/status`, { headers: payer.headers })).body.paymentStatus).toBe("completed");
    expect((await call("/api/v1/wallet/overview", { headers: payer.headers })).body.balance).toBe(900);
  });
});

describe("matching through the Neon driver", () => {
  it("makes exactly one match when two people like each other at the same instant", async () => {
    const [a, b] = await Promise.all([signIn(), signIn()]);
    const [likeA, likeB] = await Promise.all([
      post("/api/matching/swipe", a, { targetUserId: b.id, action: "like" }),
      post("/api/matching/swipe", b, { targetUserId: a.id, action: "like" }),
    ]);
    expect([likeA.status, likeB.status]).toEqual([200, 200]);
    const made = [likeA.body, likeB.body].filter((r) => r.matched);
    expect(made).toHaveLength(1);
    for (const who of [a, b]) {
      const list = await call("/api/v1/matches", { headers: who.headers });
      expect(list.status).toBe(200);
      expect(list.body.matches.map((m: { matchId: string }) => m.matchId)).toEqual([made[0]!.matchId]);
    }
  });
});

describe("the discovery feed with its sessions in Upstash", () => {
  // A spot of this test's own (the database is fresh for each run; the random spot keeps reruns
  // of this test in one database apart too).
  const spot = { latitude: -60 + Math.random() * 120, longitude: -170 + Math.random() * 340 };
  const birthDate = new Date(Date.now() - 30.5 * 365.25 * 86_400_000).toISOString().slice(0, 10);

  async function member(name: string, gender: string, nearKm: number): Promise<Caller> {
    const who = await signIn();
    const res = await call("/api/v1/profile", {
      method: "PUT",
      headers: { ...who.headers, "content-type": "application/json" },
      body: JSON.stringify({
        displayName: name,
        birthDate,
        gender,
        interestedIn: ["woman", "man"],
        ageMin: 18,
        ageMax: 99,
        maxDistanceKm: 50,
        interests: ["hiking"],
        latitude: spot.latitude + nearKm / 111.2,
        longitude: spot.longitude,
        country: "ke",
        visibility: "visible",
      }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return who;
  }

  it("pages through a session by its cursor without repeating a card", async () => {
    const viewer = await member("Viewer", "woman", 0);
    const others = [await member("Near", "man", 1), await member("Nearer", "woman", 0.5)];
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 3; page++) {
      const res = await call(`/api/v1/profiles/discover?limit=1${cursor ? `&cursor=${cursor}` : ""}`, { headers: viewer.headers });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      seen.push(...res.body.profiles.map((p: { userId: string }) => p.userId));
      cursor = res.body.nextCursor;
      if (!cursor) break;
    }
    expect(seen.sort()).toEqual(others.map((o) => o.id).sort());
    expect(cursor).toBeNull();
  });
});

describe("live match events on the Worker", () => {
  /** Opens a stream and reads its opening lines; the stream stays open until `close`. */
  async function openStream(who: Caller): Promise<{ close(): Promise<void> }> {
    const ctx = createExecutionContext();
    const res = await worker.fetch(new Request("http://api.test/api/v1/matches/events", { headers: who.headers }), bindings, ctx);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain(": connected");
    return {
      async close() {
        await reader.cancel();
        await waitOnExecutionContext(ctx);
      },
    };
  }

  it("holds at most 5 open streams per person, counted in Upstash; a sixth answers 429 and a closed stream frees its place", async () => {
    const person = await signIn();
    const streams = [];
    for (let i = 0; i < 5; i++) streams.push(await openStream(person));
    const sixth = await call("/api/v1/matches/events", { headers: person.headers });
    expect(sixth.status).toBe(429);
    expect(sixth.body).toMatchObject({ error: "rate_limit_exceeded", code: 429, message: "too many open event streams: at most 5 per person" });
    expect(sixth.body.retry_after).toBeGreaterThan(0);
    expect(sixth.headers.get("retry-after")).toBe(String(sixth.body.retry_after));

    await streams.shift()!.close();
    // The stream notices the cancel on its next turn and releases its lease then.
    const next = await waitFor(
      "a free stream slot",
      async () => {
        const ctx = createExecutionContext();
        const res = await worker.fetch(new Request("http://api.test/api/v1/matches/events", { headers: person.headers }), bindings, ctx);
        await res.body?.cancel();
        await waitOnExecutionContext(ctx);
        return res.status === 200 ? res : undefined;
      },
      { timeout: 5_000, interval: 100 },
    );
    expect(next.status).toBe(200);
    await Promise.all(streams.map((s) => s.close()));
  });
});
