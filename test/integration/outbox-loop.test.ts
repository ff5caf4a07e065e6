import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outboxMessages } from "../../src/db/tables/partners";
import { outboxWorkerDeps, startOutboxLoop } from "../../src/services/outbox/loop";
import type { TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { partnerHookedTo, partnerHooksApp } from "../support/partners";
import { json } from "../support/users";
import { waitFor } from "../support/wait";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver";

const env = useTestEnvironment();
let slow: WebhookReceiver;
let fast: WebhookReceiver;
beforeAll(async () => {
  [slow, fast] = await Promise.all([startWebhookReceiver({ slowMs: 5_000 }), startWebhookReceiver()]);
  slow.mode = "slow";
});
afterAll(() => Promise.all([slow.close(), fast.close()]));

async function testEventTo(t: TestApp, receiver: WebhookReceiver): Promise<string> {
  const { member } = await partnerHookedTo(t, env.issuer, receiver);
  const res = await t.request("/api/v1/partner/webhook/test", json({}, member.headers));
  return ((await res.json()) as { deliveryId: string }).deliveryId;
}

describe("the outbox loop", () => {
  it("delivers and records other messages while one endpoint is slow to answer", async () => {
    const t = partnerHooksApp(env);
    const held = await testEventTo(t, slow);
    const loop = startOutboxLoop(outboxWorkerDeps(t.deps, env.db.database.db), { idleMs: 20 });
    try {
      await waitFor("the slow endpoint's delivery to be in flight", () => slow.received.some((r) => r.id === held));
      // Queued after the slow one was claimed: a loop in lockstep batches would wait for it.
      const quick = await testEventTo(t, fast);
      const status = async (id: string) => (await env.db.database.db.select().from(outboxMessages).where(eq(outboxMessages.id, id)))[0]?.status;
      await waitFor("the quick delivery recorded", async () => (await status(quick)) === "delivered", { timeout: 4_000 });
      expect(fast.received.find((r) => r.id === quick)?.verified).toEqual([true]);
      expect(await status(held)).toBe("pending");
    } finally {
      await loop.stop();
    }
  });
});
