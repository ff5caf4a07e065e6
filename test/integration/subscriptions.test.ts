import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { queryRows } from "../../src/db/rows";
import { createPgDatabase } from "../../src/node/database";
import { fixedClock } from "../../src/platform/clock";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { award, idOf, overview } from "../support/people";
import { testRedis, type TestRedis } from "../support/redis";
import { json, newUser, type TestUser } from "../support/users";

const env = useTestEnvironment();
let redis: TestRedis | undefined;

afterEach(async () => {
  await redis?.cleanup();
  redis = undefined;
});

const DAY = 86_400_000;
const START = Date.parse("2026-03-02T10:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

interface Subscription {
  subscriptionId: string | null;
  planId: string;
  tier: string;
  status: string;
  currentPeriodStart: string | null;
  currentPeriodEnd: string | null;
}
interface Subscribed extends Subscription {
  chargedCoins: number;
  balance: number;
}

/** One app on a frozen clock, with an admin to fund people. */
async function setup(options: { kv?: "redis" } = {}) {
  const clock = fixedClock(START);
  if (options.kv === "redis") redis = testRedis();
  const t = buildTestApp({ database: env.db.database, issuer: env.issuer, clock, ...(redis ? { kv: redis.store() } : {}) });
  const admin = await newUser(env.issuer, { admin: true });
  return { clock, t, admin };
}

async function fund(t: TestApp, admin: TestUser, user: TestUser, amount: number): Promise<string> {
  const userId = await idOf(t, user);
  await award(t, admin, userId, amount, "test funding");
  return userId;
}

async function current(t: TestApp, user: TestUser): Promise<Subscription> {
  const res = await t.request("/api/v1/subscriptions/current", { headers: user.headers });
  expect(res.status).toBe(200);
  return (await res.json()) as Subscription;
}

const subscribeReq = (t: TestApp, user: TestUser, planId: unknown, headers: Record<string, string> = {}) =>
  t.request("/api/v1/subscriptions", json({ planId }, { ...user.headers, ...headers }));

/** What the database holds for a user: subscription rows and the user's ledger footprint. */
async function footprint(userId: string) {
  const d = env.db.database.db;
  const subs = await queryRows<{ plan_id: string; start: Date; end: Date }>(
    d,
    sql`select plan_id, current_period_start as start, current_period_end as "end" from subscriptions where user_id = ${userId}`,
  );
  const [ledger] = await queryRows<{ subscription_txns: string; postings: string; revenue: string }>(
    d,
    sql`select
          (select count(*) from ledger_transactions where actor_user_id = ${userId} and type = 'subscription')::text as subscription_txns,
          (select count(*) from ledger_postings p join ledger_accounts a on a.id = p.account_id where a.user_id = ${userId})::text as postings,
          (select coalesce(sum(p.amount), 0) from ledger_postings p join ledger_transactions t on t.id = p.transaction_id
             where t.actor_user_id = ${userId} and t.type = 'subscription' and p.account_id = 'sys_subscription_revenue')::text as revenue`,
  );
  return {
    subscriptions: subs.map((s) => ({ planId: s.plan_id, start: new Date(s.start).toISOString(), end: new Date(s.end).toISOString() })),
    subscriptionTxns: Number(ledger?.subscription_txns),
    postings: Number(ledger?.postings),
    revenue: Number(ledger?.revenue),
  };
}

const FREE: Subscription = { subscriptionId: null, planId: "standard", tier: "standard", status: "free", currentPeriodStart: null, currentPeriodEnd: null };

describe("plans and the free plan", () => {
  it("lists the three plans, cheapest first, with paid plans at 500 coins or more", async () => {
    const { t } = await setup();
    const user = await newUser(env.issuer);
    const res = await t.request("/api/v1/subscriptions/plans", { headers: user.headers });
    expect(res.status).toBe(200);
    const { plans } = (await res.json()) as { plans: { id: string; name: string; priceCoins: number; periodDays: number; description: string }[] };
    expect(plans.map((p) => p.id)).toEqual(["standard", "premium", "enterprise"]);
    const [standard, premium, enterprise] = plans;
    expect(standard?.priceCoins).toBe(0);
    expect(premium?.priceCoins).toBeGreaterThanOrEqual(500);
    expect(enterprise?.priceCoins).toBeGreaterThan(premium?.priceCoins ?? Infinity);
    expect(premium?.priceCoins).toBe(500);
    expect(enterprise?.priceCoins).toBe(2000);
    for (const p of plans) {
      expect(p.periodDays).toBe(30);
      expect(p.name.length).toBeGreaterThan(0);
      expect(p.description.length).toBeGreaterThan(0);
    }
  });

  it("needs a credential", async () => {
    const { t } = await setup();
    expect((await t.request("/api/v1/subscriptions/plans")).status).toBe(401);
    expect((await t.request("/api/v1/subscriptions/current")).status).toBe(401);
    expect((await t.request("/api/v1/subscriptions", json({ planId: "premium" }))).status).toBe(401);
  });

  it("gives a new user the free standard plan and a standard wallet at 0 coins", async () => {
    const { t } = await setup();
    const user = await newUser(env.issuer);
    expect(await current(t, user)).toEqual(FREE);
    const o = await overview(t, user);
    expect(o).toMatchObject({ balance: 0, coins: 0, tier: "standard" });
  });
});

describe("subscribing", () => {
  it("renews by exactly 30 × 24 h even where the database session's time zone crosses a DST change", async () => {
    // A session in New York, where 2026-03-08 is 23 hours long: a '30 days' interval would land an hour early.
    const url = new URL(env.db.url);
    url.searchParams.set("options", "-c TimeZone=America/New_York");
    const database = createPgDatabase(url.toString(), { max: 2 });
    try {
      const start = Date.parse("2026-01-20T12:00:00Z");
      const clock = fixedClock(start);
      const t = buildTestApp({ database, issuer: env.issuer, clock });
      const [{ tz }] = (await queryRows<{ tz: string }>(database.session().db, sql`select current_setting('TimeZone') as tz`)) as [{ tz: string }];
      expect(tz).toBe("America/New_York");
      const admin = await newUser(env.issuer, { admin: true });
      const user = await newUser(env.issuer);
      await fund(t, admin, user, 1000);
      expect(((await (await subscribeReq(t, user, "premium")).json()) as Subscribed).currentPeriodEnd).toBe(iso(start + 30 * DAY));
      const renewed = (await (await subscribeReq(t, user, "premium")).json()) as Subscribed;
      expect(renewed.currentPeriodEnd).toBe(iso(start + 60 * DAY));
    } finally {
      await database.close();
    }
  });

  it("pays premium from the wallet, lifts the tier, extends on renewal and replaces on a plan change", async () => {
    const { clock, t, admin } = await setup();
    const user = await newUser(env.issuer);
    const userId = await fund(t, admin, user, 1200);

    const res = await subscribeReq(t, user, "premium");
    expect(res.status).toBe(201);
    const first = (await res.json()) as Subscribed;
    expect(first).toEqual({
      subscriptionId: expect.stringMatching(/\S/),
      planId: "premium",
      tier: "premium",
      status: "active",
      currentPeriodStart: iso(START),
      currentPeriodEnd: iso(START + 30 * DAY),
      chargedCoins: 500,
      balance: 700,
    });
    expect(await overview(t, user)).toMatchObject({ userId, balance: 700, coins: 700, tier: "premium" });
    const active = await current(t, user);
    expect(active).toEqual({
      subscriptionId: first.subscriptionId,
      planId: "premium",
      tier: "premium",
      status: "active",
      currentPeriodStart: iso(START),
      currentPeriodEnd: iso(START + 30 * DAY),
    });
    expect(Date.parse(active.currentPeriodEnd ?? "") - Date.parse(active.currentPeriodStart ?? "")).toBe(30 * DAY);

    // The wallet history shows the payment as a debit to subscription revenue.
    const hist = await t.request("/api/v1/wallet/transactions", { headers: user.headers });
    const { transactions } = (await hist.json()) as { transactions: { type: string; signedAmount: number; balanceAfter: number; counterparty: { kind: string } }[] };
    expect(transactions[0]).toMatchObject({ type: "subscription", signedAmount: -500, balanceAfter: 700, counterparty: { kind: "subscription_revenue" } });

    // Ten days in, buying premium again adds 30 days after the current end; the start stays.
    clock.advance(10 * DAY);
    const renewed = await subscribeReq(t, user, "premium");
    expect(renewed.status).toBe(201);
    expect(await renewed.json()).toEqual({
      ...first,
      currentPeriodStart: iso(START),
      currentPeriodEnd: iso(START + 60 * DAY),
      balance: 200,
    });
    expect(await current(t, user)).toMatchObject({ planId: "premium", currentPeriodStart: iso(START), currentPeriodEnd: iso(START + 60 * DAY) });

    // Switching to enterprise replaces the period from now: the remaining premium days are not carried over.
    await fund(t, admin, user, 2000);
    clock.advance(DAY);
    const now = START + 11 * DAY;
    const switched = await subscribeReq(t, user, "enterprise");
    expect(switched.status).toBe(201);
    expect(await switched.json()).toEqual({
      subscriptionId: first.subscriptionId,
      planId: "enterprise",
      tier: "enterprise",
      status: "active",
      currentPeriodStart: iso(now),
      currentPeriodEnd: iso(now + 30 * DAY),
      chargedCoins: 2000,
      balance: 200,
    });
    expect(await overview(t, user)).toMatchObject({ balance: 200, tier: "enterprise" });

    const fp = await footprint(userId);
    expect(fp.subscriptions).toEqual([{ planId: "enterprise", start: iso(now), end: iso(now + 30 * DAY) }]);
    expect(fp.subscriptionTxns).toBe(3);
    expect(fp.revenue).toBe(500 + 500 + 2000);
  });

  it("refuses a user who cannot pay with 422 insufficient_funds and changes nothing", async () => {
    const { t, admin } = await setup();
    const user = await newUser(env.issuer);
    const userId = await fund(t, admin, user, 499);
    const before = await footprint(userId);
    expect(before).toEqual({ subscriptions: [], subscriptionTxns: 0, postings: 1, revenue: 0 });

    const res = await subscribeReq(t, user, "premium");
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ error: "insufficient_funds", code: 422, message: expect.any(String) });

    expect(await footprint(userId)).toEqual(before);
    expect(await overview(t, user)).toMatchObject({ balance: 499, tier: "standard" });
    expect(await current(t, user)).toEqual(FREE);

    // A user who never had coins (and has no wallet yet) gets the same answer.
    const broke = await newUser(env.issuer);
    const brokeId = await idOf(t, broke);
    const denied = await subscribeReq(t, broke, "enterprise");
    expect(denied.status).toBe(422);
    expect(await denied.json()).toMatchObject({ error: "insufficient_funds", code: 422 });
    expect(await footprint(brokeId)).toEqual({ subscriptions: [], subscriptionTxns: 0, postings: 0, revenue: 0 });
    expect(await current(t, broke)).toEqual(FREE);
  });

  it("answers 400 for the free plan and a bad body, 404 for an unknown plan, and charges nothing", async () => {
    const { t, admin } = await setup();
    const user = await newUser(env.issuer);
    const userId = await fund(t, admin, user, 5000);

    const standard = await subscribeReq(t, user, "standard");
    expect(standard.status).toBe(400);
    expect(await standard.json()).toMatchObject({ error: "invalid_input", code: 400, details: [expect.objectContaining({ path: "planId" })] });

    const unknown = await subscribeReq(t, user, "platinum");
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: "not_found", code: 404 });

    const bad: RequestInit[] = [
      json({}, user.headers),
      json({ planId: 5 }, user.headers),
      json({ planId: "" }, user.headers),
      json({ planId: "premium", extra: true }, user.headers),
      json(["premium"], user.headers),
      { method: "POST", headers: { ...user.headers, "content-type": "application/json" }, body: "{planId: premium" },
    ];
    for (const init of bad) {
      const res = await t.request("/api/v1/subscriptions", init);
      expect(res.status, String(init.body)).toBe(400);
      expect(await res.json()).toMatchObject({ error: "invalid_input", code: 400 });
    }

    expect(await overview(t, user)).toMatchObject({ balance: 5000, tier: "standard" });
    expect(await footprint(userId)).toMatchObject({ subscriptions: [], subscriptionTxns: 0 });
  });

  it("charges once for one Idempotency-Key and replays the first answer", async () => {
    const { t, admin } = await setup();
    const user = await newUser(env.issuer);
    const userId = await fund(t, admin, user, 1000);
    const key = { "idempotency-key": `sub-${userId}-1` };

    const first = await subscribeReq(t, user, "premium", key);
    expect(first.status).toBe(201);
    const firstBody = (await first.json()) as Subscribed;
    expect(firstBody).toMatchObject({ planId: "premium", balance: 500, currentPeriodEnd: iso(START + 30 * DAY) });

    const again = await subscribeReq(t, user, "premium", key);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(firstBody);

    // The same key for another request is a conflict, not a second charge.
    const other = await subscribeReq(t, user, "enterprise", key);
    expect(other.status).toBe(409);
    expect(await other.json()).toMatchObject({ error: "conflict", code: 409 });

    expect(await overview(t, user)).toMatchObject({ balance: 500, tier: "premium" });
    const fp = await footprint(userId);
    expect(fp.subscriptionTxns).toBe(1);
    expect(fp.revenue).toBe(500);
    expect(fp.subscriptions).toEqual([{ planId: "premium", start: iso(START), end: iso(START + 30 * DAY) }]);
  });

  it("lets only one of two concurrent subscriptions through when the wallet pays for one", async () => {
    const { t, admin } = await setup();
    const user = await newUser(env.issuer);
    const userId = await fund(t, admin, user, 700);

    const answers = await Promise.all([subscribeReq(t, user, "premium"), subscribeReq(t, user, "premium")]);
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 422]);
    const loser = answers.find((r) => r.status === 422);
    expect(await loser?.json()).toMatchObject({ error: "insufficient_funds" });

    expect(await overview(t, user)).toMatchObject({ balance: 200, tier: "premium" });
    const fp = await footprint(userId);
    expect(fp.subscriptionTxns).toBe(1);
    expect(fp.revenue).toBe(500);
    // Charged once, so the period was not extended either.
    expect(fp.subscriptions).toEqual([{ planId: "premium", start: iso(START), end: iso(START + 30 * DAY) }]);
  });

  it("falls back to standard once the period ends, and a later purchase starts a fresh period", async () => {
    const { clock, t, admin } = await setup();
    const user = await newUser(env.issuer);
    await fund(t, admin, user, 1000);
    expect((await subscribeReq(t, user, "premium")).status).toBe(201);

    clock.set(START + 30 * DAY - 1);
    expect(await current(t, user)).toMatchObject({ tier: "premium", status: "active" });

    clock.set(START + 30 * DAY);
    expect(await current(t, user)).toEqual(FREE);
    expect(await overview(t, user)).toMatchObject({ tier: "standard", balance: 500 });
    // The limiter's per-instance tier cache ends a paid tier's entry at the period end, so the
    // first request from then on already gets the standard limit.
    expect((await t.request("/v1/auth/test", { headers: user.headers })).headers.get("x-ratelimit-limit")).toBe("1000");

    // Buying the same plan after it lapsed starts from now, not from the old end.
    clock.set(START + 35 * DAY);
    const now = START + 35 * DAY;
    const again = await subscribeReq(t, user, "premium");
    expect(again.status).toBe(201);
    expect(await again.json()).toMatchObject({ currentPeriodStart: iso(now), currentPeriodEnd: iso(now + 30 * DAY), balance: 0 });
  });
});

/** Asks `instance` until the caller's hourly limit reads `limit`; the last answer. */
async function untilLimit(instance: ReturnType<typeof buildTestApp>, user: { headers: Record<string, string> }, limit: string): Promise<Response> {
  let last: Response | undefined;
  await expect
    .poll(async () => {
      last = await instance.request("/v1/auth/test", { headers: user.headers });
      return last.headers.get("x-ratelimit-limit");
    })
    .toBe(limit);
  return last as Response;
}

describe("rate limits follow the subscription", () => {
  it("gives a new premium subscriber the premium limit at once where they paid, and on other instances as soon as the store's message arrives", async () => {
    // The default tier lookup (subscriptions in the database) behind createApp's cache.
    const { clock, t, admin } = await setup({ kv: "redis" });
    // A second instance of the API on the same database and Redis, with its own tier cache.
    const other = buildTestApp({ database: env.db.database, issuer: env.issuer, clock, kv: redis!.store() });
    const user = await newUser(env.issuer);
    for (const instance of [t, other]) {
      const before = await instance.request("/v1/auth/test", { headers: user.headers });
      expect(before.headers.get("x-ratelimit-limit")).toBe("1000");
    }
    await fund(t, admin, user, 500);
    expect((await subscribeReq(t, user, "premium")).status).toBe(201);

    // The instance that took the payment drops its cached tier.
    const here = await t.request("/v1/auth/test", { headers: user.headers });
    expect(here.headers.get("x-ratelimit-limit")).toBe("5000");
    // The other one drops it when the change published on Redis reaches it: the clock does not
    // move, so no cache lifetime ran out meanwhile.
    const after = await untilLimit(other, user, "5000");
    expect(after.status).toBe(200);
  });

  it("without a store that can subscribe, gives other instances the new limit within 30 s and one request", async () => {
    const { clock, t, admin } = await setup({ kv: "redis" });
    // Upstash over REST (Workers) cannot hold a subscription: this instance only hears of changes
    // when its cached entry (30 s) runs out.
    const { subscribe: _none, ...restLike } = redis!.store();
    const other = buildTestApp({ database: env.db.database, issuer: env.issuer, clock, kv: restLike });
    const user = await newUser(env.issuer);
    expect((await other.request("/v1/auth/test", { headers: user.headers })).headers.get("x-ratelimit-limit")).toBe("1000");
    await fund(t, admin, user, 500);
    expect((await subscribeReq(t, user, "premium")).status).toBe(201);
    expect((await other.request("/v1/auth/test", { headers: user.headers })).headers.get("x-ratelimit-limit")).toBe("1000");

    // Past 30 s the next request still gets the old limit, at once, and starts the re-read behind it.
    clock.advance(31_000);
    const due = await other.request("/v1/auth/test", { headers: user.headers });
    expect(due.headers.get("x-ratelimit-limit")).toBe("1000");
    const after = await untilLimit(other, user, "5000");
    // Requests made at the standard tier still count against the hour.
    expect(Number(after.headers.get("x-ratelimit-remaining"))).toBeLessThan(5000 - 1);
  });
});
