import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliveryRecords, outboxMessages, partners } from "../../src/db/tables/partners";
import { outboxWorkerDeps } from "../../src/services/outbox/loop";
import { RETRY_DELAYS_MS } from "../../src/services/outbox/retry";
import { deliverDue } from "../../src/services/outbox/worker";
import { buildTestApp, fixedClock, type TestApp } from "../support/app";
import { routedFetch, tableResolver } from "../support/document-server";
import { useTestEnvironment } from "../support/environment";
import { expectError } from "../support/errors";
import { applyAsPartner, review, setWebhook } from "../support/partners";
import { ENTERPRISE, signIn, type Person } from "../support/people";
import { json } from "../support/users";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver";

const env = useTestEnvironment();
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver({ slowMs: 2_000, retryAfterSeconds: 3_600 });
});
afterAll(() => receiver.close());

const hookUrl = (host = "hooks.test") => `http://${host}:${receiver.port}/hooks`;

function setup() {
  const table: Record<string, string[]> = { "hooks.test": ["127.0.0.1"], "rebind.example": ["93.184.216.34"] };
  const clock = fixedClock(Date.now());
  const t = buildTestApp({
    database: env.db.database,
    issuer: env.issuer,
    tierLookup: ENTERPRISE,
    clock,
    fetch: routedFetch(["hooks.test", "rebind.example"]),
    deps: { resolver: tableResolver(table), webhookAllowedHosts: ["hooks.test"] },
  });
  const worker = outboxWorkerDeps(t.deps, env.db.database.db, { timeoutMs: 500 });
  return { t, clock, table, worker, deliver: () => deliverDue(worker, 100) };
}

/** A partner with a webhook on the receiver; the receiver holds its secret. */
async function partner(t: TestApp, url = hookUrl()): Promise<{ member: Person; partnerId: string; secret: string }> {
  const member = await signIn(t, env.issuer);
  const { partnerId } = await applyAsPartner(t, member);
  const profile = await setWebhook(t, member, { url });
  const secret = profile.webhook.secret as string;
  receiver.secrets = [secret];
  return { member, partnerId, secret };
}

async function testEvent(t: TestApp, member: Person): Promise<string> {
  const res = await t.request("/api/v1/partner/webhook/test", json({}, member.headers));
  expect(res.status, await res.clone().text()).toBe(202);
  return ((await res.json()) as { deliveryId: string }).deliveryId;
}

const message = async (id: string) => (await env.db.database.db.select().from(outboxMessages).where(eq(outboxMessages.id, id)))[0]!;
const forId = (id: string) => receiver.received.filter((r) => r.id === id);

describe("signed webhook deliveries", () => {
  it("delivers an admin's decision signed by the Standard Webhooks specification, and logs the attempt", async () => {
    const { t, deliver } = setup();
    receiver.mode = "ok";
    const admin = await signIn(t, env.issuer, { admin: true });
    const { member, partnerId } = await partner(t);
    expect((await review(t, admin, partnerId, "approve")).status).toBe(200);
    const queued = (await env.db.database.db.select().from(outboxMessages).where(eq(outboxMessages.targetId, partnerId))).find((m) => m.kind === "partner.application.approved");
    await deliver();

    const [got] = forId(queued!.id);
    expect(got?.verified).toEqual([true]);
    expect(got?.signature).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(JSON.parse(got!.body)).toEqual({ type: "partner.application.approved", timestamp: expect.any(String), data: { partnerId, status: "approved", reviewedAt: expect.any(String) } });

    const log = (await (await t.request("/api/v1/partner/deliveries", { headers: member.headers })).json()) as { deliveries: { deliveryId: string; status: string; attempts: { statusCode: number; latencyMs: number; outcome: string }[] }[] };
    const entry = log.deliveries.find((d) => d.deliveryId === queued!.id);
    expect(entry).toMatchObject({ status: "delivered", attempts: [{ outcome: "delivered", statusCode: 200, latencyMs: expect.any(Number) }] });
    const [record] = await env.db.database.db.select().from(deliveryRecords).where(eq(deliveryRecords.messageId, queued!.id));
    expect(record).toMatchObject({ channel: "webhook", route: `hooks.test:${receiver.port}`, outcome: "delivered", statusCode: 200 });
  });

  it("retries a failing endpoint on the schedule with jitter under the same webhook-id, then fails the delivery", async () => {
    const { t, clock, deliver } = setup();
    const { member } = await partner(t);
    receiver.mode = "500";
    const id = await testEvent(t, member);
    for (let attempt = 1; attempt <= RETRY_DELAYS_MS.length + 1; attempt++) {
      const before = clock.now();
      await deliver();
      const row = await message(id);
      expect(row.attempts).toBe(attempt);
      if (attempt <= RETRY_DELAYS_MS.length) {
        const delay = row.nextAttemptAt!.getTime() - before;
        const base = RETRY_DELAYS_MS[attempt - 1]!;
        expect(delay).toBeGreaterThanOrEqual(base);
        expect(delay).toBeLessThanOrEqual(base * 1.1);
        // Not due a moment before its time.
        clock.set(row.nextAttemptAt!.getTime() - 1);
        await deliver();
        expect((await message(id)).attempts).toBe(attempt);
        clock.set(row.nextAttemptAt!.getTime());
      } else {
        expect(row).toMatchObject({ status: "failed", nextAttemptAt: null, lastError: "HTTP 500" });
      }
    }
    expect(forId(id)).toHaveLength(RETRY_DELAYS_MS.length + 1);
    expect(new Set(forId(id).map((r) => r.id)).size).toBe(1);
  });

  it("honours Retry-After on 429", async () => {
    const { t, clock, deliver } = setup();
    const { member } = await partner(t);
    receiver.mode = "429";
    const id = await testEvent(t, member);
    await deliver();
    const row = await message(id);
    expect(row.nextAttemptAt!.getTime() - clock.now()).toBeGreaterThanOrEqual(3_600_000);
    expect(row.lastError).toBe("HTTP 429");
  });

  it("disables the endpoint on 410 Gone and tells the partner in the profile", async () => {
    const { t, deliver } = setup();
    const { member } = await partner(t);
    receiver.mode = "410";
    const id = await testEvent(t, member);
    await deliver();
    expect(await message(id)).toMatchObject({ status: "failed", nextAttemptAt: null });
    const profile = (await (await t.request("/api/v1/partner/profile", { headers: member.headers })).json()) as { webhook: { enabled: boolean; disabledReason: string } };
    expect(profile.webhook).toMatchObject({ enabled: false, disabledReason: "the endpoint answered 410 Gone" });
    await expectError(await t.request("/api/v1/partner/webhook/test", json({}, member.headers)), 409, "conflict");
  });

  it("disables an endpoint that has failed every delivery for five days", async () => {
    const { t, clock, deliver } = setup();
    const { member, partnerId } = await partner(t);
    receiver.mode = "500";
    await env.db.database.db.update(partners).set({ webhookFailingSince: new Date(clock.now() - 5 * 24 * 3_600_000) }).where(eq(partners.id, partnerId));
    await testEvent(t, member);
    await deliver();
    const [row] = await env.db.database.db.select().from(partners).where(eq(partners.id, partnerId));
    expect(row).toMatchObject({ webhookEnabled: false, webhookDisabledReason: "the endpoint failed every delivery for 5 days" });
  });

  it("counts a redirect as a failure and does not follow it", async () => {
    const { t, deliver } = setup();
    const { member } = await partner(t);
    receiver.mode = "redirect";
    const id = await testEvent(t, member);
    await deliver();
    expect((await message(id)).lastError).toBe("redirect (HTTP 302) not followed");
    expect(receiver.received.filter((r) => r.path === "/elsewhere")).toEqual([]);
  });

  it("gives up on a slow endpoint at the timeout and retries", async () => {
    const { t, deliver } = setup();
    const { member } = await partner(t);
    receiver.mode = "slow";
    const id = await testEvent(t, member);
    await deliver();
    expect(await message(id)).toMatchObject({ status: "pending", attempts: 1, lastError: "timed out after 500 ms" });
  });

  it("signs with both secrets for 24 hours after a rotation, then with the new one only", async () => {
    const { t, clock, deliver } = setup();
    receiver.mode = "ok";
    const { member, partnerId, secret: old } = await partner(t);
    const rotated = (await (await t.request("/api/v1/partner/webhook/rotate-secret", json({}, member.headers))).json()) as { secret: string };
    receiver.secrets = [old, rotated.secret];
    const during = await testEvent(t, member);
    await deliver();
    expect(forId(during)[0]?.verified).toEqual([true, true]);
    expect(forId(during)[0]?.signature.split(" ")).toHaveLength(2);

    await env.db.database.db.update(partners).set({ webhookPreviousSecretUntil: new Date(clock.now() - 1) }).where(eq(partners.id, partnerId));
    const after = await testEvent(t, member);
    await deliver();
    expect(forId(after)[0]?.verified).toEqual([false, true]);
  });

  it("checks the host again at delivery: a name that turned to loopback is refused", async () => {
    const { t, table, deliver } = setup();
    receiver.mode = "ok";
    const { member } = await partner(t, hookUrl("rebind.example"));
    table["rebind.example"] = ["127.0.0.1"];
    const id = await testEvent(t, member);
    await deliver();
    expect(forId(id)).toEqual([]);
    expect((await message(id)).lastError).toMatch(/^refused: /);
  });

  it("delivers each message once when two workers claim side by side", async () => {
    const { t, worker } = setup();
    receiver.mode = "ok";
    const { member } = await partner(t);
    const ids = [];
    for (let i = 0; i < 12; i++) ids.push(await testEvent(t, member));
    await Promise.all([deliverDue(worker, 5), deliverDue(worker, 5), deliverDue(worker, 5)]);
    for (const id of ids) expect(forId(id).length).toBeLessThanOrEqual(1);
    await deliverDue(worker, 100);
    for (const id of ids) expect(forId(id)).toHaveLength(1);
  });
});

describe("delivery log and replay", () => {
  it("replays a delivery under the same webhook-id; another member's delivery is 404", async () => {
    const { t, deliver } = setup();
    receiver.mode = "ok";
    const { member } = await partner(t);
    const id = await testEvent(t, member);
    await deliver();
    const other = await signIn(t, env.issuer);
    await expectError(await t.request("/api/v1/partner/deliveries", { headers: other.headers }), 404, "not_found");
    await applyAsPartner(t, other);
    const theirs = (await (await t.request("/api/v1/partner/deliveries", { headers: other.headers })).json()) as { deliveries: unknown[] };
    expect(theirs.deliveries).toEqual([]);
    await expectError(await t.request(`/api/v1/partner/deliveries/${id}/replay`, json({}, other.headers)), 404, "not_found");

    const replay = await t.request(`/api/v1/partner/deliveries/${id}/replay`, json({}, member.headers));
    expect(replay.status).toBe(202);
    await deliver();
    expect(forId(id)).toHaveLength(2);
    expect(forId(id).every((r) => r.verified[0])).toBe(true);
    await expectError(await t.request("/api/v1/partner/deliveries/not-an-id/replay", json({}, member.headers)), 400, "invalid_input");
  });

  it("pages the log newest first with a cursor", async () => {
    const { t } = setup();
    const { member } = await partner(t);
    // Setting the webhook queued a partner.profile.updated first: four deliveries in all.
    const ids = [await testEvent(t, member), await testEvent(t, member), await testEvent(t, member)];
    const first = (await (await t.request("/api/v1/partner/deliveries?limit=2", { headers: member.headers })).json()) as { deliveries: { deliveryId: string }[]; nextCursor: string };
    expect(first.deliveries.map((d) => d.deliveryId)).toEqual([ids[2], ids[1]]);
    const second = (await (await t.request(`/api/v1/partner/deliveries?limit=2&cursor=${first.nextCursor}`, { headers: member.headers })).json()) as { deliveries: { deliveryId: string; event: string }[]; nextCursor: string | null };
    expect(second.deliveries.map((d) => d.deliveryId)[0]).toBe(ids[0]);
    expect(second.deliveries[1]?.event).toBe("partner.profile.updated");
    expect(second.nextCursor).toBeNull();
    await expectError(await t.request("/api/v1/partner/deliveries?cursor=abc", { headers: member.headers }), 400, "invalid_input");
  });
});
