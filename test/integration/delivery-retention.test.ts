import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "../../src/db/rows";
import { deliveryRecords, outboxMessages } from "../../src/db/tables/partners";
import { messagingWorkflows, workflowRuns } from "../../src/db/tables/workflows";
import { outboxWorkerDeps } from "../../src/services/outbox/loop";
import { consumeOutboxBatch } from "../../src/services/outbox/queue-consumer";
import { DELIVERY_RETENTION_DAYS, pruneDeliveries } from "../../src/services/outbox/retention";
import { deliverDue } from "../../src/services/outbox/worker";
import { RETENTION_TASKS } from "../../src/services/upkeep/retention";
import { pruneRuns, WORKFLOW_RUN_RETENTION_DAYS } from "../../src/services/workflows/run-retention";
import { fixedClock } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { expectError } from "../support/errors";
import { partnerHookedTo, partnerHooksApp } from "../support/partners";
import { json } from "../support/users";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver";

// The database is this file's own: pruning deletes every old row, so counts are exact here.
const env = useTestEnvironment();
const db = () => env.db.database.db;
const DAY = 86_400_000;
const NOW = Date.parse("2026-11-21T12:00:00Z");
const ago = (days: number) => new Date(NOW - days * DAY);

type Status = "pending" | "delivered" | "failed";

/** An outbox message settled (or not) at the times given, with a delivery record per attempt day. */
async function message(id: string, status: Status, times: { created: number; lastAttempt?: number }, attemptDays: number[] = []): Promise<void> {
  await db()
    .insert(outboxMessages)
    .values({
      id,
      kind: "partner.test",
      channel: "webhook",
      targetId: "prt_retention",
      body: "{}",
      status,
      attempts: attemptDays.length,
      nextAttemptAt: status === "pending" ? new Date(NOW) : null,
      lastAttemptAt: times.lastAttempt === undefined ? null : ago(times.lastAttempt),
      deliveredAt: status === "delivered" && times.lastAttempt !== undefined ? ago(times.lastAttempt) : null,
      createdAt: ago(times.created),
    });
  for (const [n, days] of attemptDays.entries()) await record(`${id}_a${n}`, id, days);
}

async function record(id: string, messageId: string | null, days: number, channel = "webhook"): Promise<void> {
  await db().insert(deliveryRecords).values({ id, channel, route: "hooks.test", outcome: "failed", latencyMs: 5, messageId, occurredAt: ago(days) });
}

const messagesLeft = async (prefix: string) =>
  (await queryRows<{ id: string }>(db(), sql`select id from outbox_messages where id like ${`${prefix}%`} order by id`)).map((r) => r.id);
const recordsLeft = async (prefix: string) =>
  (await queryRows<{ id: string }>(db(), sql`select id from delivery_records where id like ${`${prefix}%`} order by id`)).map((r) => r.id);

describe("the delivery log's retention", () => {
  it(`deletes settled messages idle for ${DELIVERY_RETENTION_DAYS} days with their records, and keeps pending and recent ones whole`, async () => {
    const past = DELIVERY_RETENTION_DAYS + 0.01;
    const within = DELIVERY_RETENTION_DAYS - 0.01;
    await message("r1_delivered_old", "delivered", { created: past + 1, lastAttempt: past }, [past + 1, past]);
    await message("r1_failed_old", "failed", { created: past + 4, lastAttempt: past }, [past + 4, past + 2, past]);
    // Failed without an attempt (the webhook was off when its turn came): its creation counts.
    await message("r1_failed_unsent", "failed", { created: past });
    // Pending whatever the age, with every attempt it had.
    await message("r1_pending_ancient", "pending", { created: 400, lastAttempt: 60 }, [90, 60]);
    // Settled within the retention: kept, but its first attempt is older than the retention.
    await message("r1_delivered_recent", "delivered", { created: past + 3, lastAttempt: within }, [past + 3, within]);
    await message("r1_failed_recent", "failed", { created: 2, lastAttempt: 1 }, [2, 1]);
    // Records of no outbox message: a provider's report, a workflow run's delivery, one whose message is gone.
    await record("r1_provider_old", null, past, "email");
    await record("r1_provider_recent", null, within, "email");
    await record("r1_run_delivery_old", "wfr_retention", past, "push");
    await record("r1_orphan_old", "msg_gone", past);

    // The records counted are those of the second step; a pruned message's own go with it uncounted.
    expect(await pruneDeliveries(db(), NOW)).toEqual({ messages: 3, records: 4 });
    expect(await messagesLeft("r1_")).toEqual(["r1_delivered_recent", "r1_failed_recent", "r1_pending_ancient"]);
    expect(await recordsLeft("r1_")).toEqual([
      "r1_delivered_recent_a1",
      "r1_failed_recent_a0",
      "r1_failed_recent_a1",
      "r1_pending_ancient_a0",
      "r1_pending_ancient_a1",
      "r1_provider_recent",
    ]);
    expect(await pruneDeliveries(db(), NOW)).toEqual({ messages: 0, records: 0 });

    // Once a settled message's last attempt is past the retention, it goes with its attempts (and the provider's report by its age).
    expect(await pruneDeliveries(db(), NOW + 0.02 * DAY)).toEqual({ messages: 1, records: 1 });
    expect(await recordsLeft("r1_delivered_recent")).toEqual([]);
    expect(await recordsLeft("r1_provider")).toEqual([]);
  });

  it("clears a backlog in bounded batches, oldest first, and the next run goes on", async () => {
    for (const [n, days] of [90, 80, 70, 60, 50].entries()) await message(`r2_${n}`, "delivered", { created: days, lastAttempt: days }, [days]);
    // The cap leaves the newest message for the next run; its record, older than the retention, goes by its age.
    expect(await pruneDeliveries(db(), NOW, { batchSize: 2, maxBatches: 2 })).toEqual({ messages: 4, records: 1 });
    expect(await messagesLeft("r2_")).toEqual(["r2_4"]);
    expect(await recordsLeft("r2_")).toEqual([]);
    expect(await pruneDeliveries(db(), NOW, { batchSize: 2, maxBatches: 2 })).toEqual({ messages: 1, records: 0 });
    expect(await messagesLeft("r2_")).toEqual([]);
  });

  it("leaves a delivery that a replay made pending again", async () => {
    await message("r3_replayed", "failed", { created: 40, lastAttempt: 35 }, [35]);
    // What the replay does, under its row lock, before the prune's statement runs.
    await db().update(outboxMessages).set({ status: "pending", attempts: 0, nextAttemptAt: new Date(NOW) }).where(sql`id = 'r3_replayed'`);
    expect(await pruneDeliveries(db(), NOW)).toEqual({ messages: 0, records: 0 });
    expect(await recordsLeft("r3_")).toEqual(["r3_replayed_a0"]);
  });
});

describe("a pruned delivery, asked for again", () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(() => receiver.close());

  it("is gone from the log; its replay is 404 and a queue message naming it is acknowledged", async () => {
    // Frozen at the real time: the receiver, as a partner's should, refuses a stale webhook-timestamp.
    const clock = fixedClock(Date.now());
    const t = partnerHooksApp(env, { clock });
    const { member } = await partnerHookedTo(t, env.issuer, receiver);
    receiver.mode = "ok";
    const worker = outboxWorkerDeps(t.deps, db(), { timeoutMs: 2_000 });
    await deliverDue(worker, 100);
    const test = await t.request("/api/v1/partner/webhook/test", json({}, member.headers));
    expect(test.status).toBe(202);
    const { deliveryId } = (await test.json()) as { deliveryId: string };
    await deliverDue(worker, 100);
    receiver.mode = "500";
    const retrying = ((await (await t.request("/api/v1/partner/webhook/test", json({}, member.headers))).json()) as { deliveryId: string }).deliveryId;
    await deliverDue(worker, 100);

    // Through the upkeep's own list, as the Workers cron and the Node schedule run it, a month on
    // (the app's clock stays, as the member's token would not be valid a month on).
    const task = RETENTION_TASKS.find((x) => x.name === "delivery log pruning");
    await task?.run({ db: db(), kv: t.deps.kv, ids: t.deps.ids, logger: t.deps.logger }, clock.now() + (DELIVERY_RETENTION_DAYS + 1) * DAY);
    expect(t.logs).toContainEqual(expect.objectContaining({ msg: "delivery log pruned" }));

    const log = (await (await t.request("/api/v1/partner/deliveries", { headers: member.headers })).json()) as { deliveries: { deliveryId: string; status: string; attempts: unknown[] }[] };
    expect(log.deliveries).toEqual([expect.objectContaining({ deliveryId: retrying, status: "pending", attempts: [expect.objectContaining({ statusCode: 500 })] })]);
    const body = await expectError(await t.request(`/api/v1/partner/deliveries/${deliveryId}/replay`, json({}, member.headers)), 404, "not_found");
    expect(body.message).toBe("no such delivery");

    const acked: string[] = [];
    await consumeOutboxBatch(worker, { messages: [{ body: { id: deliveryId } }], ackAll: () => acked.push("ack"), retryAll: () => acked.push("retry") }, undefined);
    expect(acked).toEqual(["ack"]);
  });
});

describe("the workflow runs' retention", () => {
  it(`deletes runs finished more than ${WORKFLOW_RUN_RETENTION_DAYS} days ago, and keeps open and recent ones`, async () => {
    const [user] = await queryRows<{ id: string }>(db(), sql`insert into users (id, subject) values ('usr_runs_retention', 'runs-retention') returning id`);
    const workflowId = "wfl_retention";
    await db()
      .insert(messagingWorkflows)
      .values({ id: workflowId, name: "retention", graph: { nodes: [], edges: [] }, createdBy: user!.id, createdAt: ago(400), updatedAt: ago(400) });
    const past = WORKFLOW_RUN_RETENTION_DAYS + 0.01;
    const runs: [string, string, number, number | null][] = [
      // id, status, created (days ago), finished (days ago)
      ["wfr_succeeded_old", "succeeded", past + 1, past],
      ["wfr_failed_old", "failed", past, past],
      ["wfr_timed_out_old", "timed_out", 200, 199],
      ["wfr_queued_ancient", "queued", 300, null],
      ["wfr_running_ancient", "running", 300, null],
      ["wfr_succeeded_recent", "succeeded", past, WORKFLOW_RUN_RETENTION_DAYS - 0.01],
      // An end the engine reported earlier than the run's start: it counts from the run's creation.
      ["wfr_reported_early", "succeeded", 1, past],
    ];
    await db()
      .insert(workflowRuns)
      .values(
        runs.map(([id, status, created, finished], n) => ({
          id,
          workflowId,
          workflowVersion: 1,
          trigger: "match.created",
          eventId: n + 1,
          input: {},
          status,
          tokenHash: "x",
          createdAt: ago(created),
          finishedAt: finished === null ? null : ago(finished),
          updatedAt: ago(finished ?? created),
          deadlineAt: ago(created - 1),
        })),
      );
    expect(await pruneRuns(db(), NOW, { batchSize: 2, maxBatches: 1 })).toBe(2);
    expect(await pruneRuns(db(), NOW)).toBe(1);
    const left = await queryRows<{ id: string }>(db(), sql`select id from workflow_runs where workflow_id = ${workflowId} order by id`);
    expect(left.map((r) => r.id)).toEqual(["wfr_queued_ancient", "wfr_reported_early", "wfr_running_ancient", "wfr_succeeded_recent"]);
    expect(await pruneRuns(db(), NOW)).toBe(0);
  });

  it("is in the upkeep's list next to the delivery log's", () => {
    expect(RETENTION_TASKS.map((x) => x.name)).toEqual(expect.arrayContaining(["delivery log pruning", "workflow run pruning"]));
  });
});
