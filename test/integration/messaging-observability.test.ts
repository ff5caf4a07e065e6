import { describe, expect, it } from "vitest";
import { sqlDeliveryRecords, type DeliveryRecord } from "../../src/services/delivery-records/records";
import { wilsonLowerBound } from "../../src/services/delivery-records/observability";
import { createIdGenerator, webRandom } from "../../src/platform/ids";
import { buildTestApp, fixedClock } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { expectError } from "../support/errors";
import { ENTERPRISE, signIn } from "../support/people";

const H = 3_600_000;
type Env = ReturnType<typeof useTestEnvironment>;

/** Each describe has a database of its own, so the records of one test never count in another's figures. */
function setup(env: Env) {
  const now = Date.now();
  const clock = fixedClock(now);
  const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock });
  const writer = sqlDeliveryRecords(createIdGenerator(clock, webRandom));
  const write = async (n: number, entry: Omit<DeliveryRecord, "occurredAt"> & { agoMs?: number }) => {
    for (let i = 0; i < n; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, n - i) }, () => writer.record(env.db.database.db, { ...entry, occurredAt: now - (entry.agoMs ?? 60_000) })));
    }
  };
  return { t, now, write };
}

async function figures(t: ReturnType<typeof setup>["t"], headers: Record<string, string>, window = "1h") {
  const res = await t.request(`/api/v1/admin/messaging/observability?window=${window}`, { headers });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as {
    channels: { channel: string; sent: number; delivered: number; failed: number; deliveryRate: number; p50LatencyMs: number; p95LatencyMs: number; health: string }[];
    routes: { rank: number; route: string; score: number; delivered: number; failed: number }[];
  };
}

describe("messaging observability per channel", () => {
  const env = useTestEnvironment();
  it("counts per channel from the records of the window, with rate, percentiles and health", async () => {
    const { t, write } = setup(env);
    const admin = await signIn(t, env.issuer, { admin: true });
    await write(18, { channel: "webhook", route: "a.example", outcome: "delivered", latencyMs: 100 });
    await write(2, { channel: "webhook", route: "a.example", outcome: "delivered", latencyMs: 1_000 });
    await write(1, { channel: "webhook", route: "a.example", outcome: "failed", latencyMs: null, error: "HTTP 500" });
    await write(3, { channel: "sms", route: "provider-x", outcome: "failed", latencyMs: 200 });
    await write(1, { channel: "sms", route: "provider-x", outcome: "sent", latencyMs: 50 });
    // Outside the hour: counted in 24h only.
    await write(3, { channel: "webhook", route: "a.example", outcome: "failed", latencyMs: 100, agoMs: 2 * H });

    const hour = await figures(t, admin.headers);
    const webhook = hour.channels.find((c) => c.channel === "webhook");
    expect(webhook).toMatchObject({ sent: 21, delivered: 20, failed: 1, p50LatencyMs: 100, health: "ok" });
    expect(webhook?.deliveryRate).toBeCloseTo(20 / 21);
    expect(webhook?.p95LatencyMs).toBe(1_000);
    expect(hour.channels.find((c) => c.channel === "sms")).toMatchObject({ sent: 4, delivered: 0, failed: 3, deliveryRate: 0, health: "down" });

    const day = await figures(t, admin.headers, "24h");
    expect(day.channels.find((c) => c.channel === "webhook")).toMatchObject({ sent: 24, failed: 4, health: "degraded" });
  });
});

describe("messaging observability per route", () => {
  const env = useTestEnvironment();
  it("ranks routes by the lower confidence bound: 3 of 3 does not outrank 990 of 1,000", async () => {
    const { t, write } = setup(env);
    const admin = await signIn(t, env.issuer, { admin: true });
    await write(3, { channel: "webhook", route: "few.example", outcome: "delivered", latencyMs: 10 });
    await write(990, { channel: "webhook", route: "many.example", outcome: "delivered", latencyMs: 300 });
    await write(10, { channel: "webhook", route: "many.example", outcome: "failed", latencyMs: 300 });
    const { routes } = await figures(t, admin.headers);
    expect(routes.map((r) => r.route)).toEqual(["many.example", "few.example"]);
    expect(routes[0]?.score).toBeCloseTo(wilsonLowerBound(990, 1000), 4);
    expect(routes[1]?.score).toBeCloseTo(wilsonLowerBound(3, 3), 4);
    expect(routes.map((r) => r.rank)).toEqual([1, 2]);
  });
});

describe("messaging observability without records", () => {
  const env = useTestEnvironment();
  it("is empty without records, refuses a member and an unknown window", async () => {
    const { t } = setup(env);
    const admin = await signIn(t, env.issuer, { admin: true });
    const member = await signIn(t, env.issuer);
    expect(await figures(t, admin.headers)).toMatchObject({ channels: [], routes: [], window: "1h" });
    await expectError(await t.request("/api/v1/admin/messaging/observability", { headers: member.headers }), 403, "forbidden");
    await expectError(await t.request("/api/v1/admin/messaging/observability?window=2h", { headers: admin.headers }), 400, "invalid_input");
  });
});
