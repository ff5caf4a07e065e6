import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outboxMessages } from "../../src/db/tables/partners";
import { queryRows } from "../../src/db/rows";
import { enqueue } from "../../src/services/outbox/enqueue";
import { useTestEnvironment } from "../support/environment";
import { partnerHookedTo, partnerHooksApp } from "../support/partners";
import { runTs, type TsProcess } from "../support/process";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver";

const env = useTestEnvironment();
let receiver: WebhookReceiver;
const running: TsProcess[] = [];
beforeAll(async () => {
  receiver = await startWebhookReceiver({ slowMs: 40 });
  receiver.mode = "slow";
});
afterAll(async () => {
  for (const p of running) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  await receiver.close();
});

async function until(check: () => Promise<boolean> | boolean, deadlineMs: number, what: string): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function startWorker(): TsProcess {
  const proc = runTs("test/support/outbox-worker-process.ts", [], { DATABASE_URL: env.db.url, HOOK_HOSTS: "hooks.test", LEASE_MS: "1500" });
  running.push(proc);
  return proc;
}

describe("the delivering process killed mid-batch", () => {
  it("loses nothing: every message arrives, signed, and a repeat carries the same webhook-id", async () => {
    const t = partnerHooksApp(env);
    const { member, partnerId } = await partnerHookedTo(t, env.issuer, receiver);
    const total = 120;
    const ids: string[] = [];
    await env.db.database.db.transaction(async (tx) => {
      for (let i = 0; i < total; i++) ids.push(await enqueue(tx, { ids: t.deps.ids, now: Date.now() }, { kind: "partner.webhook.test", targetId: partnerId, data: { partnerId, message: `event ${i}` } }));
    });
    // The profile.updated of setting the webhook is one more.
    const expected = new Set([...ids, ...(await env.db.database.db.select({ id: outboxMessages.id }).from(outboxMessages).where(eq(outboxMessages.targetId, partnerId))).map((r) => r.id)]);

    const first = startWorker();
    await until(() => receiver.received.length >= 40, 60_000, "the first worker to deliver 40");
    first.child.kill("SIGKILL");
    await first.exited;
    const deliveredBeforeKill = receiver.received.length;
    expect(deliveredBeforeKill).toBeLessThan(expected.size);

    const second = startWorker();
    await until(
      async () => (await queryRows<{ n: string }>(env.db.database.db, sql`select count(*)::text as n from outbox_messages where target_id = ${partnerId} and status <> 'delivered'`))[0]?.n === "0",
      90_000,
      "every message to be delivered",
    );
    second.child.kill("SIGKILL");
    await second.exited;

    const arrived = new Set(receiver.received.map((r) => r.id));
    for (const id of expected) expect(arrived.has(id), id).toBe(true);
    expect(receiver.received.every((r) => r.verified[0])).toBe(true);
    // Repeats are only the in-flight messages the kill cut off, each under its own id.
    expect(receiver.received.length - expected.size).toBeLessThanOrEqual(20);
  }, 180_000);
});
