import { describe, expect, it } from "vitest";
import { supportVideoRequests } from "../../src/db/tables/support-video";
import { buildTestApp, fixedClock, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { expectError } from "../support/errors";
import { ENTERPRISE, signIn, type Person } from "../support/people";
import { recordAnswer, type RecordedAnswer } from "../support/support-records";
import { json } from "../support/users";

const NOW = Date.parse("2026-03-02T10:00:00Z");
const M = 60_000;
const H = 60 * M;
const D = 24 * H;
const STATS = "/api/v1/admin/support/stats";
const iso = (ms: number) => new Date(ms).toISOString();

type Env = ReturnType<typeof useTestEnvironment>;

/** Each describe has a database of its own, so its figures count only the records it wrote. */
async function setup(env: Env) {
  const clock = fixedClock(NOW);
  const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock, env: { SUPPORT_VIDEO_HANDLING_MINUTES: "10" } });
  const [admin, member] = await Promise.all([signIn(t, env.issuer, { admin: true }), signIn(t, env.issuer)]);
  return { t, clock, admin, member };
}

async function stats(t: TestApp, who: Person, query = ""): Promise<Record<string, unknown>> {
  const res = await t.request(`${STATS}${query}`, { headers: who.headers });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

const figures = (total: number, escalated: number, fallback: number, cited: number) => ({
  total,
  escalated,
  fallback,
  cited,
  escalationRate: escalated / total,
  fallbackRate: fallback / total,
  citedRate: cited / total,
});

describe("support stats over known records", () => {
  const env = useTestEnvironment();
  it("counts answers by category and language, tickets by age, the median time to resolve, and the video queue per priority", async () => {
    const { t, clock, admin, member } = await setup(env);
    const db = env.db.database.db;
    const write = (a: RecordedAnswer) => recordAnswer(db, t.deps.ids, member.id, a);
    const open1 = await write({ at: NOW - 30 * M, category: "billing", language: "en", via: "model", reasons: ["asked_for_person"], cited: true });
    await write({ at: NOW - 2 * H, category: "billing", language: "en", via: "fallback", cited: true });
    const resolvedA = await write({ at: NOW - 3 * H, category: "billing", language: "fr", via: "fallback", reasons: ["nothing_found"] });
    const resolvedB = await write({ at: NOW - 26 * H, category: "safety", language: "fr", via: "model", reasons: ["self_harm"], cited: true });
    await write({ at: NOW - 5 * H, category: "billing", language: "en", via: "fallback", reasons: ["asked_for_person"] });
    await write({ at: NOW - 3 * D, category: "account", language: "en", via: "model", reasons: ["threat"], cited: true });
    await write({ at: NOW - 8 * D, category: "technical", language: "en", via: "model", reasons: ["model"] });
    // 31 days ago: outside the default window, at the start of the explicit one below.
    await write({ at: NOW - 31 * D, category: "technical", language: "en", via: "model", cited: true });
    expect(open1).not.toBeNull();

    // Both resolved a minute before the figures are read: after 3 h − 1 min and 26 h − 1 min.
    clock.set(NOW - M);
    for (const id of [resolvedA, resolvedB]) expect((await t.request(`/api/v1/admin/support/tickets/${id}/resolve`, { method: "POST", headers: admin.headers })).status).toBe(200);

    // The video queue: urgent 1, high 0, normal 2, low 1 waiting; a finished call does not count.
    const people = await Promise.all([1, 2, 3, 4].map(() => signIn(t, env.issuer)));
    const queue: [Person, string, number][] = [
      [people[0]!, "urgent", NOW - 20 * M],
      [people[1]!, "normal", NOW - 15 * M],
      [people[2]!, "normal", NOW - 10 * M],
      [people[3]!, "low", NOW - 5 * M],
    ];
    for (const [who, priority, at] of queue) {
      clock.set(at);
      const res = await t.request("/api/v1/ai-agents/support-video/request", json({ userId: who.id, reason: "Cannot verify my photos", platform: "web", priority }, admin.headers));
      expect(res.status, await res.clone().text()).toBe(201);
    }
    await db.insert(supportVideoRequests).values({
      id: t.deps.ids.next("svr"),
      userId: member.id,
      reason: "An earlier call",
      priority: "urgent",
      priorityRank: 3,
      platform: "ios",
      language: "en",
      callbackTimes: [],
      timezone: "UTC",
      status: "done",
      createdAt: new Date(NOW - 2 * D),
    });
    clock.set(NOW);

    expect(await stats(t, admin)).toEqual({
      from: iso(NOW - 30 * D),
      to: iso(NOW),
      answers: figures(7, 6, 3, 4),
      byCategory: [
        { category: "account", ...figures(1, 1, 0, 1) },
        { category: "billing", ...figures(4, 3, 3, 2) },
        { category: "safety", ...figures(1, 1, 0, 1) },
        { category: "technical", ...figures(1, 1, 0, 0) },
      ],
      byLanguage: [
        { language: "en", ...figures(5, 4, 2, 3) },
        { language: "fr", ...figures(2, 2, 1, 1) },
      ],
      tickets: {
        opened: 6,
        resolved: 2,
        // The median of 3 h − 1 min (10,740 s) and 26 h − 1 min (93,540 s).
        medianResolveSeconds: 52_140,
        open: { total: 4, oldestCreatedAt: iso(NOW - 8 * D), byAge: { under1h: 1, from1hTo24h: 1, from1dTo7d: 1, over7d: 1 } },
      },
      videoQueue: {
        waiting: 4,
        handlingMinutes: 10,
        byPriority: [
          { priority: "urgent", waiting: 1, oldestCreatedAt: iso(NOW - 20 * M), estimatedWaitMinutes: 20 },
          { priority: "high", waiting: 0, oldestCreatedAt: null, estimatedWaitMinutes: 20 },
          { priority: "normal", waiting: 2, oldestCreatedAt: iso(NOW - 15 * M), estimatedWaitMinutes: 40 },
          { priority: "low", waiting: 1, oldestCreatedAt: iso(NOW - 5 * M), estimatedWaitMinutes: 50 },
        ],
      },
    });

    // `from` is inclusive, `to` exclusive; the open tickets and the queue are live whatever the window.
    const explicit = await stats(t, admin, `?from=${iso(NOW - 31 * D)}&to=${encodeURIComponent(new Date(NOW - 3 * D).toISOString().replace("Z", "+00:00"))}`);
    expect(explicit).toMatchObject({
      from: iso(NOW - 31 * D),
      to: iso(NOW - 3 * D),
      answers: figures(2, 1, 0, 1),
      byCategory: [{ category: "technical", ...figures(2, 1, 0, 1) }],
      byLanguage: [{ language: "en", ...figures(2, 1, 0, 1) }],
      tickets: { opened: 1, resolved: 0, medianResolveSeconds: null, open: { total: 4 } },
      videoQueue: { waiting: 4 },
    });
    // Only `to`: the 30 days before it.
    expect(await stats(t, admin, `?to=${iso(NOW - 2 * D)}`)).toMatchObject({ from: iso(NOW - 32 * D), answers: figures(3, 2, 0, 2) });
  });
});

describe("support stats without records", () => {
  const env = useTestEnvironment();
  it("answers zeros and nulls, and an idle queue where a new request waits one handling time", async () => {
    const { t, admin } = await setup(env);
    expect(await stats(t, admin)).toEqual({
      from: iso(NOW - 30 * D),
      to: iso(NOW),
      answers: { total: 0, escalated: 0, fallback: 0, cited: 0, escalationRate: null, fallbackRate: null, citedRate: null },
      byCategory: [],
      byLanguage: [],
      tickets: { opened: 0, resolved: 0, medianResolveSeconds: null, open: { total: 0, oldestCreatedAt: null, byAge: { under1h: 0, from1hTo24h: 0, from1dTo7d: 0, over7d: 0 } } },
      videoQueue: {
        waiting: 0,
        handlingMinutes: 10,
        byPriority: ["urgent", "high", "normal", "low"].map((priority) => ({ priority, waiting: 0, oldestCreatedAt: null, estimatedWaitMinutes: 10 })),
      },
    });
  });

  it("refuses a malformed or inverted window, one over 367 days, and anyone but an admin", async () => {
    const { t, admin, member } = await setup(env);
    const bad = [
      ["from=yesterday", "from"],
      ["to=2026-03-01", "to"],
      ["from=2026-03-01T00:00:00", "from"],
      [`from=${iso(NOW)}&to=${iso(NOW)}`, "from"],
      [`from=${iso(NOW)}&to=${iso(NOW - D)}`, "from"],
      [`from=${iso(NOW - 368 * D)}`, "from"],
      [`from=${iso(NOW + D)}`, "from"],
    ];
    for (const [q, path] of bad) {
      const body = await expectError(await t.request(`${STATS}?${q}`, { headers: admin.headers }), 400, "invalid_input");
      expect(body.details?.[0]?.path, q).toBe(path);
    }
    expect(await stats(t, admin, `?from=${iso(NOW - 367 * D)}`)).toMatchObject({ from: iso(NOW - 367 * D) });
    await expectError(await t.request(STATS, { headers: member.headers }), 403, "forbidden");
    await expectError(await t.request(STATS), 401, "unauthorized");
  });
});
