import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliveryRecords, outboxMessages } from "../../src/db/tables/partners";
import { outboxWorkerDeps, startOutboxLoop } from "../../src/services/outbox/loop";
import { fixedClock } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { partnerHookedTo, partnerHooksApp } from "../support/partners";
import { json } from "../support/users";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver";

const env = useTestEnvironment();
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver({ slowMs: 1_500 });
  receiver.mode = "slow";
});
afterAll(() => receiver.close());

/** A test event queued for a partner whose endpoint answers slowly, and the loop delivering it. */
async function slowDeliveryInFlight() {
  const clock = fixedClock(Date.now());
  const t = partnerHooksApp(env, { clock });
  const { member } = await partnerHookedTo(t, env.issuer, receiver);
  const res = await t.request("/api/v1/partner/webhook/test", json({}, member.headers));
  const { deliveryId } = (await res.json()) as { deliveryId: string };
  const loop = startOutboxLoop(outboxWorkerDeps(t.deps, env.db.database.db, { timeoutMs: 10_000 }), { idleMs: 20 });
  const deadline = Date.now() + 10_000;
  while (!receiver.received.some((r) => r.id === deliveryId)) {
    if (Date.now() > deadline) throw new Error("the delivery never reached the receiver");
    await new Promise((r) => setTimeout(r, 10));
  }
  const row = async () => (await env.db.database.db.select().from(outboxMessages).where(eq(outboxMessages.id, deliveryId)))[0]!;
  const records = () => env.db.database.db.select().from(deliveryRecords).where(eq(deliveryRecords.messageId, deliveryId));
  return { loop, row, records, now: clock.now() };
}

describe("stopping the outbox loop", () => {
  it("waits for an attempt in flight and records it before resolving", async () => {
    const { loop, row, records } = await slowDeliveryInFlight();
    expect((await row()).status).toBe("pending");
    await loop.stop(5_000);
    expect(await row()).toMatchObject({ status: "delivered", attempts: 1, nextAttemptAt: null });
    expect(await records()).toHaveLength(1);
  });

  it("cuts an attempt still waiting past the grace and releases its message at once, without spending an attempt", async () => {
    const { loop, row, records, now } = await slowDeliveryInFlight();
    await loop.stop(50);
    const released = await row();
    expect(released).toMatchObject({ status: "pending", attempts: 0 });
    // Due now rather than at the end of the claim's lease, a minute away.
    expect(released.nextAttemptAt?.getTime()).toBe(now);
    expect(await records()).toEqual([]);
  });
});
