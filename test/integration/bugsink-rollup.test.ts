import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestApp, fixedClock } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { expectError } from "../support/errors";
import { startFakeBugsink, type FakeBugsink, type FakeBugsinkIssue } from "../support/fake-bugsink";
import { newUser } from "../support/users";

const env = useTestEnvironment();
const PATH = "/api/v1/admin/observability/bugsink";
let fake: FakeBugsink;

const issue = (n: number, project: number, over: Partial<FakeBugsinkIssue> = {}): FakeBugsinkIssue => ({
  id: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`,
  project,
  first_seen: "2026-11-01T00:00:00.000Z",
  last_seen: `2026-11-${String(10 + n).padStart(2, "0")}T00:00:00.000Z`,
  digested_event_count: n * 10,
  calculated_type: "TypeError",
  calculated_value: `boom ${n}`,
  transaction: "/api/x",
  is_resolved: false,
  is_muted: false,
  ...over,
});

beforeAll(async () => {
  // Pages of two, so that the rollup must follow Bugsink's `next` links.
  fake = await startFakeBugsink({ pageSize: 2, slowMs: 1_500 });
  fake.projects = [
    { id: 1, name: "api" },
    { id: 2, name: "web" },
  ];
  fake.issues = [
    ...Array.from({ length: 7 }, (_, i) => issue(i + 1, 1)),
    issue(8, 1, { is_resolved: true }),
    issue(9, 1, { is_muted: true }),
    issue(10, 2, { calculated_value: "" }),
  ];
});
afterAll(() => fake?.close());

function setup(env_: Record<string, string> = {}) {
  const clock = fixedClock(Date.parse("2026-11-27T12:00:00Z"));
  const t = buildTestApp({
    database: env.db.database,
    issuer: env.issuer,
    clock,
    env: { BUGSINK_URL: fake.url, BUGSINK_API_TOKEN: fake.token, BUGSINK_TIMEOUT_MS: "300", ...env_ },
  });
  return { t, clock };
}

type Rollup = {
  configured: boolean;
  status: string;
  fetchedAt: string | null;
  projects: { id: string; name: string; unresolved: number; unresolvedUnmuted: number; truncated: boolean; samples: { id: string; title: string; lastSeen: string; eventCount: number }[] }[];
};

async function rollup(t: ReturnType<typeof setup>["t"], headers: Record<string, string>): Promise<Rollup> {
  const res = await t.request(PATH, { headers });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Rollup;
}

describe("error-tracker rollup", () => {
  it("counts unresolved and unmuted issues per project over every page, with the newest samples", async () => {
    fake.mode = "ok";
    const { t } = setup();
    const admin = await newUser(env.issuer, { admin: true });
    const body = await rollup(t, admin.headers);
    expect(body).toMatchObject({ configured: true, status: "ok", fetchedAt: "2026-11-27T12:00:00.000Z" });
    const api = body.projects.find((p) => p.id === "1");
    expect(api).toMatchObject({ name: "api", unresolved: 8, unresolvedUnmuted: 7, truncated: false });
    expect(api?.samples.map((s) => s.title)).toEqual(["boom 7", "boom 6", "boom 5", "boom 4", "boom 3"].map((v) => `TypeError: ${v}`));
    expect(api?.samples[0]).toMatchObject({ lastSeen: "2026-11-17T00:00:00.000Z", eventCount: 70 });
    expect(body.projects.find((p) => p.id === "2")).toMatchObject({ unresolved: 1, unresolvedUnmuted: 1, samples: [{ title: "TypeError" }] });
    const asked = fake.requests.filter((r) => r.startsWith("/api/canonical/0/issues/?project=1"));
    expect(asked[0]).toContain("sort=last_seen&order=desc");
  });

  it("answers from the store for 60 s, then reads the tracker again", async () => {
    fake.mode = "ok";
    const { t, clock } = setup();
    const admin = await newUser(env.issuer, { admin: true });
    await rollup(t, admin.headers);
    const before = fake.requests.length;
    clock.advance(59_000);
    expect((await rollup(t, admin.headers)).fetchedAt).toBe("2026-11-27T12:00:00.000Z");
    expect(fake.requests.length).toBe(before);
    clock.advance(2_000);
    expect((await rollup(t, admin.headers)).fetchedAt).toBe("2026-11-27T12:01:01.000Z");
    expect(fake.requests.length).toBeGreaterThan(before);
  });

  it.each(["down", "slow", "garbage"] as const)("tracker %s: 200 unavailable, with the last figures read", async (mode) => {
    const { t, clock } = setup();
    const admin = await newUser(env.issuer, { admin: true });
    fake.mode = mode;
    expect(await rollup(t, admin.headers)).toEqual({ configured: true, status: "unavailable", fetchedAt: null, projects: [] });

    fake.mode = "ok";
    const good = await rollup(t, admin.headers);
    clock.advance(61_000);
    fake.mode = mode;
    const stale = await rollup(t, admin.headers);
    expect(stale).toEqual({ ...good, status: "unavailable" });
    expect(t.logs.some((l) => l.msg === "bugsink unavailable")).toBe(true);
    fake.mode = "ok";
  });

  it("answers configured: false without a URL or token", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, env: { BUGSINK_URL: fake.url } });
    const admin = await newUser(env.issuer, { admin: true });
    expect(await rollup(t, admin.headers)).toEqual({ configured: false });
  });

  it("treats a wrong token as unavailable and never leaks it", async () => {
    fake.mode = "ok";
    const { t } = setup({ BUGSINK_API_TOKEN: "f".repeat(40) });
    const admin = await newUser(env.issuer, { admin: true });
    const res = await t.request(PATH, { headers: admin.headers });
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({ status: "unavailable" });
    expect(text).not.toContain("f".repeat(40));
  });

  it("refuses members (403) and anonymous callers (401)", async () => {
    const { t } = setup();
    const member = await newUser(env.issuer);
    await expectError(await t.request(PATH, { headers: member.headers }), 403, "forbidden");
    await expectError(await t.request(PATH), 401, "unauthorized");
  });
});
