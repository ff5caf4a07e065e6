import { createRoute, z } from "@hono/zod-openapi";
import { afterEach, describe, expect, it } from "vitest";
import { createRouter } from "../../src/http/router";
import { protectedRoute } from "../../src/http/routes";
import { fixedClock } from "../../src/platform/clock";
import { createRedisStore } from "../../src/node/kv-redis";
import type { Tier, TierLookup } from "../../src/services/tiers/port";
import { buildTestApp, type TestApp, type TestAppOptions } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { testRedis, type TestRedis } from "../support/redis";
import { newUser } from "../support/users";
import { waitFor } from "../support/wait";

const env = useTestEnvironment();
let redis: TestRedis;

afterEach(async () => {
  await redis?.cleanup();
});

// An AI-limited route whose requests stay in flight until the test lets them go.
/** A route held at `gate`; `entered` counts the requests that passed the limits and reached it. */
function slowAiRoute(gate: Promise<void>, entered: { count: number } = { count: 0 }) {
  return createRouter().openapi(
    protectedRoute("ai", {
      method: "get",
      path: "/__test/ai-slow",
      responses: { 200: { description: "done", content: { "application/json": { schema: z.object({ ok: z.boolean() }) } } } },
    }),
    async (c) => {
      entered.count += 1;
      await gate;
      return c.json({ ok: true }, 200);
    },
  );
}

function app(extra: Partial<TestAppOptions> = {}): TestApp {
  redis = redis && extra.kv ? redis : testRedis();
  return buildTestApp({ database: env.db.database, issuer: env.issuer, kv: redis.store(), ...extra });
}

const START = Date.parse("2026-03-02T10:00:00Z");

describe("general limits", () => {
  it("answers the 101st request within a minute with 429, exact body and headers", async () => {
    const clock = fixedClock(START);
    const t = app({ clock });
    const user = await newUser(env.issuer);
    for (let i = 1; i <= 100; i++) {
      const res = await t.request("/v1/auth/test", { headers: user.headers });
      expect(res.status).toBe(200);
      if (i === 1 || i === 100) {
        expect(res.headers.get("x-ratelimit-limit")).toBe("1000");
        expect(res.headers.get("x-ratelimit-remaining")).toBe(String(1000 - i));
        expect(res.headers.get("x-ratelimit-reset")).toBe(String(Date.parse("2026-03-02T11:00:00Z") / 1000));
      }
      clock.advance(100);
    }
    const denied = await t.request("/v1/auth/test", { headers: user.headers });
    expect(denied.status).toBe(429);
    const body = (await denied.json()) as Record<string, unknown>;
    expect(body).toEqual({
      error: "rate_limit_exceeded",
      message: "rate limit exceeded: 100 requests per minute on the standard plan",
      code: 429,
      retry_after: 50,
      requestId: denied.headers.get("x-request-id"),
    });
    expect(denied.headers.get("retry-after")).toBe("50");
    expect(denied.headers.get("x-ratelimit-limit")).toBe("1000");
    expect(denied.headers.get("x-ratelimit-remaining")).toBe("900");

    clock.advance(50_000);
    expect((await t.request("/v1/auth/test", { headers: user.headers })).status).toBe(200);
  });

  it("holds the hourly quota over a sliding hour", async () => {
    const clock = fixedClock(START);
    const t = app({ clock });
    const user = await newUser(env.issuer);
    for (let minute = 0; minute < 10; minute++) {
      const batch = await Promise.all(Array.from({ length: 100 }, () => t.request("/v1/auth/test", { headers: user.headers })));
      expect(batch.every((r) => r.status === 200)).toBe(true);
      clock.advance(61_000);
    }
    const over = await t.request("/v1/auth/test", { headers: user.headers });
    expect(over.status).toBe(429);
    expect(((await over.json()) as { message: string }).message).toContain("1000 requests per hour");

    // Half an hour into the next hour, half of the previous hour's requests still count.
    clock.set(Date.parse("2026-03-02T11:30:00Z"));
    const later = await t.request("/v1/auth/test", { headers: user.headers });
    expect(later.status).toBe(200);
    expect(Number(later.headers.get("x-ratelimit-remaining"))).toBe(1000 - 500 - 1);
  });

  it("lets a premium user see its higher limit", async () => {
    const premium: TierLookup = { tierOf: async () => ({ tier: "premium" as Tier, until: null }) };
    const t = app({ tierLookup: premium });
    const user = await newUser(env.issuer);
    const res = await t.request("/v1/auth/test", { headers: user.headers });
    expect(res.headers.get("x-ratelimit-limit")).toBe("5000");
  });

  it("never allows more than the limit across two app instances on one Redis", async () => {
    redis = testRedis();
    const clock = fixedClock(START);
    const a = buildTestApp({ database: env.db.database, issuer: env.issuer, kv: redis.store(), clock });
    const b = buildTestApp({ database: env.db.database, issuer: env.issuer, kv: redis.store(), clock });
    const user = await newUser(env.issuer);
    const results = await Promise.all(
      Array.from({ length: 160 }, (_, i) => (i % 2 ? a : b).request("/v1/auth/test", { headers: user.headers })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    expect(statuses.filter((s) => s === 429)).toHaveLength(60);
  });

  it("limits each user separately", async () => {
    const clock = fixedClock(START);
    const t = app({ clock });
    const [alice, bob] = await Promise.all([newUser(env.issuer), newUser(env.issuer)]);
    await Promise.all(Array.from({ length: 100 }, () => t.request("/v1/auth/test", { headers: alice.headers })));
    expect((await t.request("/v1/auth/test", { headers: alice.headers })).status).toBe(429);
    expect((await t.request("/v1/auth/test", { headers: bob.headers })).status).toBe(200);
  });

  it("carries the limit headers on error answers too, which count like any request", async () => {
    const clock = fixedClock(START);
    const t = app({ clock });
    const alice = await newUser(env.issuer);
    const ok = await t.request("/v1/auth/test", { headers: alice.headers });
    // 404 from a service, 400 from validation, 403 from the role check: each counted and told.
    const failures = [
      await t.request("/api/v1/profile/usr_00000000000000000000000000", { headers: alice.headers }),
      await t.request("/api/v1/wallet/transactions?limit=0", { headers: alice.headers }),
      await t.request("/api/v1/admin/coins/mint/state", { headers: alice.headers }),
    ];
    expect(failures.map((r) => r.status)).toEqual([404, 400, 403]);
    const remaining = [ok, ...failures].map((r) => Number(r.headers.get("x-ratelimit-remaining")));
    const first = remaining[0]!;
    expect(remaining).toEqual([first, first - 1, first - 2, first - 3]);
    for (const r of failures) {
      expect(r.headers.get("x-ratelimit-limit")).toBe(ok.headers.get("x-ratelimit-limit"));
      expect(r.headers.get("x-ratelimit-reset")).toMatch(/^\d+$/);
      expect(r.headers.get("x-request-id")).toBeTruthy();
    }
  });

  it("serves requests when the store is down, and logs and counts the failure", async () => {
    const dead = createRedisStore({ url: "redis://127.0.0.1:1" });
    try {
      const t = buildTestApp({ database: env.db.database, issuer: env.issuer, kv: dead });
      const user = await newUser(env.issuer);
      const res = await t.request("/v1/auth/test", { headers: user.headers });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBeNull();
      const failure = t.logs.find((l) => l.msg === "rate limit check failed; serving the request");
      expect(failure).toMatchObject({ level: "error", failOpenTotal: 1 });
    } finally {
      await dead.close();
    }
  });
});

describe("AI limits", () => {
  it("answers the 6th concurrent AI request with 429 while five are in flight, and frees slots when they end", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const t = app();
    const entered = { count: 0 };
    t.app.route("/", slowAiRoute(gate, entered));
    const user = await newUser(env.issuer);
    const inFlight = Array.from({ length: 5 }, () => t.request("/__test/ai-slow", { headers: user.headers }));
    await waitFor("the five to pass their rate check", () => entered.count === 5);
    const sixth = await t.request("/__test/ai-slow", { headers: user.headers });
    expect(sixth.status).toBe(429);
    expect(await sixth.json()).toMatchObject({ error: "rate_limit_exceeded", code: 429, retry_after: 1 });
    expect(sixth.headers.get("x-ai-ratelimit-limit")).toBe("100");

    release();
    const done = await Promise.all(inFlight);
    expect(done.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(done[0]?.headers.get("x-ai-ratelimit-limit")).toBe("100");
    expect(done[0]?.headers.get("x-ratelimit-limit")).toBe("1000");

    // Releases are deferred: a slot is free again soon after (a slot left taken lasts AI_LEASE_MS, 2 minutes).
    await waitFor("a free slot", async () => (await t.request("/__test/ai-slow", { headers: user.headers })).status === 200);
  });

  it("counts an AI request once against the general quota, in the same check", async () => {
    const t = app({ clock: fixedClock(START) });
    t.app.route("/", slowAiRoute(Promise.resolve()));
    const user = await newUser(env.issuer);
    const first = await t.request("/__test/ai-slow", { headers: user.headers });
    const second = await t.request("/__test/ai-slow", { headers: user.headers });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.headers.get("x-ratelimit-remaining")).toBe("999");
    expect(second.headers.get("x-ratelimit-remaining")).toBe("998");
    expect(second.headers.get("x-ai-ratelimit-remaining")).toBe("98");
  });

  it("frees a slot by expiry when its instance died", async () => {
    const clock = fixedClock(START);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const t = app({ clock });
    const entered = { count: 0 };
    t.app.route("/", slowAiRoute(gate, entered));
    const user = await newUser(env.issuer);
    // Five requests that never end, as if their instance died mid-request.
    void Array.from({ length: 5 }, () => t.request("/__test/ai-slow", { headers: user.headers }));
    await waitFor("the five to hold their slots", () => entered.count === 5);
    expect((await t.request("/__test/ai-slow", { headers: user.headers })).status).toBe(429);
    clock.advance(121_000);
    const res = t.request("/__test/ai-slow", { headers: user.headers });
    release();
    expect((await res).status).toBe(200);
  });
});
