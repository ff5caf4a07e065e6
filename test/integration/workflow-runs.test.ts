import { serve, type ServerType } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminAuditLog } from "../../src/db/tables/admin";
import { deliveryRecords, outboxMessages } from "../../src/db/tables/partners";
import { messagingWorkflows, workflowRuns } from "../../src/db/tables/workflows";
import { queryRows } from "../../src/db/rows";
import { outboxWorkerDeps } from "../../src/services/outbox/loop";
import { deliverDue } from "../../src/services/outbox/worker";
import { hmacSha256Hex } from "../../src/services/payments/signatures";
import { startEventRuns, timeOutRuns } from "../../src/services/workflows/run-schedule";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { startFakeN8n } from "../support/fake-n8n";
import { award, signIn } from "../support/people";
import { json, newUser, type TestUser } from "../support/users";
import { sampleWorkflow, saveWorkflow } from "../support/workflows";

const env = useTestEnvironment();
const KEY = "n8n-test-key-0123456789";
const SECRET = "workflow-callback-secret-0123456789";
const BASE = "/api/v1/messaging/workflows";
const STATUS = `${BASE}/status`;
let n8n: Awaited<ReturnType<typeof startFakeN8n>>;
let server: ServerType;
let t: TestApp;

beforeAll(async () => {
  n8n = await startFakeN8n(KEY);
  // The engine calls our status URL over HTTP, so the app listens on a loopback port of its own.
  let handler: (req: Request) => Response | Promise<Response> = () => new Response("starting", { status: 503 });
  server = serve({ fetch: (req) => handler(req), port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((r) => (server.listening ? r() : server.once("listening", () => r())));
  const appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t = buildTestApp({
    database: env.db.database,
    issuer: env.issuer,
    env: {
      N8N_URL: n8n.url,
      N8N_API_KEY: KEY,
      WORKFLOW_CALLBACK_SECRET: SECRET,
      WORKFLOW_STATUS_URL: `${appUrl}${STATUS}`,
      MESSAGING_GATEWAY_URL: "https://gateway.example",
      MESSAGING_EMAIL_FROM: "hi@example.com",
    },
  });
  handler = (req) => t.app.fetch(req);
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await n8n.close();
});

const db = () => env.db.database.db;
/** Hands over this run's message only: other tests' messages stay theirs. */
async function deliver(runId: string): Promise<void> {
  const ids = await db().select({ id: outboxMessages.id }).from(outboxMessages).where(and(eq(outboxMessages.kind, "workflow.run"), sql`${outboxMessages.body} like ${`%"runId":"${runId}"%`}`));
  expect(ids).toHaveLength(1);
  await deliverDue(outboxWorkerDeps(t.deps, db(), { timeoutMs: 5_000 }), 100, ids.map((r) => r.id));
}
const post = (path: string, body: unknown, headers: Record<string, string>) => t.request(path, json(body, headers));
const callback = (body: unknown, headers: Record<string, string>) => t.request(STATUS, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

async function syncedWorkflow(admin: TestUser, body: unknown = sampleWorkflow()): Promise<string> {
  const saved = await saveWorkflow(t, admin, body);
  const res = await t.request(`${BASE}/${saved.workflowId}/sync`, { method: "POST", headers: admin.headers });
  expect(res.status, await res.clone().text()).toBe(200);
  return saved.workflowId;
}

async function runs(admin: TestUser, workflowId: string, query = ""): Promise<{ runs: Record<string, unknown>[]; nextCursor: string | null }> {
  const res = await t.request(`${BASE}/${workflowId}/runs${query}`, { headers: admin.headers });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as { runs: Record<string, unknown>[]; nextCursor: string | null };
}

/** Starts a run and hands it to the fake engine, which executes it and reports back. */
async function runToEnd(admin: TestUser, workflowId: string, input: Record<string, unknown>) {
  const res = await post(`${BASE}/${workflowId}/run`, { input }, admin.headers);
  expect(res.status, await res.clone().text()).toBe(202);
  const { runId } = (await res.json()) as { runId: string };
  await deliver(runId);
  await n8n.settled();
  const handed = n8n.received.find((r) => r.runId === runId);
  const report = n8n.statusCalls.find((c) => c.body.runId === runId);
  return { runId, handed, report };
}

describe("workflow runs through the engine", () => {
  it("runs end to end: 202 queued, handed to the webhook by the outbox, reported back succeeded with its deliveries", async () => {
    const admin = await newUser(env.issuer, { admin: true });
    const workflowId = await syncedWorkflow(admin);
    const { runId, handed, report } = await runToEnd(admin, workflowId, { plan: "premium", displayName: "Amina" });
    expect(runId).toMatch(/^wfr_/);
    expect(handed).toMatchObject({ runId, workflowId, input: { plan: "premium", displayName: "Amina" }, statusUrl: expect.stringMatching(/\/api\/v1\/messaging\/workflows\/status$/) });
    expect(handed?.callbackToken).toMatch(/^[0-9a-f]{64}$/);
    expect(report?.status).toBe(200);
    expect(report?.authorization).toBe(`Bearer ${String(handed?.callbackToken)}`);

    const [run] = (await runs(admin, workflowId)).runs;
    expect(run).toMatchObject({ runId, workflowId, workflowVersion: 1, trigger: "manual", status: "succeeded", error: null, input: { plan: "premium" } });
    expect(run?.startedAt).not.toBeNull();
    expect(run?.finishedAt).not.toBeNull();
    // The premium branch sent the push only.
    expect(run?.deliveries).toEqual([{ nodeId: "hello", channel: "push", route: "fake-gateway", status: "delivered", latencyMs: 42, at: expect.any(String) }]);
    const records = await db().select().from(deliveryRecords).where(eq(deliveryRecords.messageId, runId));
    expect(records.map((r) => [r.channel, r.route, r.outcome, r.latencyMs])).toEqual([["push", "fake-gateway", "delivered", 42]]);
    const observed = await t.request("/api/v1/admin/messaging/observability?window=1h", { headers: admin.headers });
    const figures = (await observed.json()) as { routes: { channel: string; route: string; delivered: number }[] };
    expect(figures.routes.find((r) => r.channel === "push" && r.route === "fake-gateway")?.delivered).toBeGreaterThanOrEqual(1);
    // The token left the outbox once the hand-over was done; the run keeps only its HMAC.
    const [msg] = await db().select().from(outboxMessages).where(and(eq(outboxMessages.kind, "workflow.run"), sql`${outboxMessages.body} like ${`%${runId}%`}`));
    expect(msg?.status).toBe("delivered");
    expect(msg?.body).not.toContain(String(handed?.callbackToken));
    const [row] = await db().select().from(workflowRuns).where(eq(workflowRuns.id, runId));
    expect(row?.tokenHash).not.toContain(String(handed?.callbackToken));

    const audit = await db().select().from(adminAuditLog).where(eq(adminAuditLog.targetId, workflowId));
    expect(audit.map((a) => a.action).sort()).toEqual(["workflow.create", "workflow.run", "workflow.sync"]);
  });

  it("reports a failed message as failed and the other branch's email through SMTP", async () => {
    const admin = await newUser(env.issuer, { admin: true });
    const workflowId = await syncedWorkflow(admin);
    const { runId } = await runToEnd(admin, workflowId, { plan: "free", email: "a@example.com" });
    const run = (await runs(admin, workflowId)).runs.find((r) => r.runId === runId);
    expect(run).toMatchObject({ status: "succeeded", deliveries: [{ nodeId: "mail", channel: "email", route: "smtp", status: "delivered" }] });
  });

  it("applies replays as no-ops, ignores a late running, refuses an impossible move with 409", async () => {
    const admin = await newUser(env.issuer, { admin: true });
    const workflowId = await syncedWorkflow(admin);
    const { runId, report } = await runToEnd(admin, workflowId, { plan: "premium" });
    const auth = { authorization: report!.authorization };
    const replay = await callback(report!.body, auth);
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ runId, status: "succeeded", changed: false });
    const late = await callback({ runId, status: "running" }, auth);
    expect(await late.json()).toMatchObject({ status: "succeeded", changed: false });
    const impossible = await callback({ runId, status: "failed", error: "boom" }, auth);
    expect(impossible.status).toBe(409);
    expect(await impossible.json()).toMatchObject({ error: "conflict" });
    // The replay recorded nothing twice.
    expect(await db().select().from(deliveryRecords).where(eq(deliveryRecords.messageId, runId))).toHaveLength(1);
  });

  it("takes reports in order queued → running → failed, signed by the body HMAC instead of the token", async () => {
    const admin = await newUser(env.issuer, { admin: true });
    const workflowId = await syncedWorkflow(admin);
    const res = await post(`${BASE}/${workflowId}/run`, {}, admin.headers);
    const { runId } = (await res.json()) as { runId: string };
    const signed = async (body: unknown) => {
      const raw = JSON.stringify(body);
      return t.request(STATUS, { method: "POST", headers: { "content-type": "application/json", "x-workflow-signature": `sha256=${await hmacSha256Hex(SECRET, raw)}` }, body: raw });
    };
    const running = await signed({ runId, status: "running", startedAt: "2026-11-27T10:00:00.000Z" });
    expect(await running.json()).toMatchObject({ status: "running", startedAt: "2026-11-27T10:00:00.000Z", changed: true });
    const failed = await signed({ runId, status: "failed", error: "gateway down", deliveries: [{ nodeId: "hello", channel: "push", route: "gw", status: "failed", latencyMs: 5 }] });
    expect(await failed.json()).toMatchObject({ status: "failed", error: "gateway down", changed: true, deliveries: [{ nodeId: "hello", status: "failed" }] });
    expect((await signed({ runId: "wfr_unknown", status: "running" })).status).toBe(404);
    expect((await signed({ runId, status: "queued" })).status).toBe(400);
    expect((await signed({ runId, status: "running", extra: 1 })).status).toBe(400);
  });

  it("refuses forged, missing and foreign credentials with 401 before reading the body", async () => {
    const admin = await newUser(env.issuer, { admin: true });
    const workflowId = await syncedWorkflow(admin);
    const a = await runToEnd(admin, workflowId, { plan: "premium" });
    const res = await post(`${BASE}/${workflowId}/run`, {}, admin.headers);
    const { runId: other } = (await res.json()) as { runId: string };
    const cases: [unknown, Record<string, string>][] = [
      [{ runId: other, status: "succeeded" }, {}],
      [{ runId: other, status: "succeeded" }, { authorization: `Bearer ${"0".repeat(64)}` }],
      // A run's token is that run's only.
      [{ runId: other, status: "succeeded" }, { authorization: a.report!.authorization }],
      [{ runId: "wfr_unknown", status: "succeeded" }, { authorization: a.report!.authorization }],
      [{ runId: other, status: "succeeded" }, { "x-workflow-signature": `sha256=${"0".repeat(64)}` }],
      [{ runId: other, status: "succeeded" }, admin.headers],
      ["not an object", { authorization: a.report!.authorization }],
    ];
    for (const [body, headers] of cases) {
      const r = await callback(body, headers);
      expect(r.status, JSON.stringify(headers)).toBe(401);
      expect(await r.json()).toMatchObject({ error: "unauthorized" });
    }
    const [row] = await db().select().from(workflowRuns).where(eq(workflowRuns.id, other));
    expect(row?.status).toBe("queued");
  });

  it("honours Idempotency-Key, pages the history, and answers 404, 409 and 503 as documented", async () => {
    const admin = await newUser(env.issuer, { admin: true });
    const workflowId = await syncedWorkflow(admin);
    const path = `${BASE}/${workflowId}/run`;
    const first = await post(path, { input: { a: 1 } }, { ...admin.headers, "idempotency-key": "run-1" });
    const again = await post(path, { input: { a: 1 } }, { ...admin.headers, "idempotency-key": "run-1" });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(await first.json());
    expect((await post(path, { input: { a: 2 } }, { ...admin.headers, "idempotency-key": "run-1" })).status).toBe(409);
    await post(path, {}, admin.headers);
    const page1 = await runs(admin, workflowId, "?limit=1");
    expect(page1.runs).toHaveLength(1);
    const page2 = await runs(admin, workflowId, `?limit=5&cursor=${page1.nextCursor}`);
    expect(page2.runs).toHaveLength(1);
    expect(page2.nextCursor).toBeNull();
    expect((await t.request(`${BASE}/${workflowId}/runs?cursor=bad`, { headers: admin.headers })).status).toBe(400);

    expect((await post(`${BASE}/wfl_none/run`, {}, admin.headers)).status).toBe(404);
    expect((await t.request(`${BASE}/wfl_none/runs`, { headers: admin.headers })).status).toBe(404);
    const draft = await saveWorkflow(t, admin);
    const unsynced = await post(`${BASE}/${draft.workflowId}/run`, {}, admin.headers);
    expect(unsynced.status).toBe(409);
    expect((await post(path, { input: { big: "x".repeat(17_000) } }, admin.headers)).status).toBe(400);
    expect((await post(path, { input: [] }, admin.headers)).status).toBe(400);
    const bare = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const un = await bare.request(path, json({}, admin.headers));
    expect(un.status).toBe(503);
    expect(((await un.json()) as { message: string }).message).toMatch(/automation engine/);
    const member = await newUser(env.issuer);
    expect((await post(path, {}, member.headers)).status).toBe(403);
    expect((await t.request(`${BASE}/${workflowId}/runs`, { headers: member.headers })).status).toBe(403);
    expect((await t.request(path, { method: "POST" })).status).toBe(401);
  });

  it("times out a run without a final report, after which a report is an impossible move", async () => {
    const admin = await newUser(env.issuer, { admin: true });
    const workflowId = await syncedWorkflow(admin);
    const res = await post(`${BASE}/${workflowId}/run`, {}, admin.headers);
    const { runId } = (await res.json()) as { runId: string };
    const [row] = await db().select().from(workflowRuns).where(eq(workflowRuns.id, runId));
    // The sample's longest path waits 30 minutes; the deadline adds an hour's grace.
    expect(row!.deadlineAt.getTime() - row!.createdAt.getTime()).toBe(90 * 60_000);
    const status = async () => (await db().select().from(workflowRuns).where(eq(workflowRuns.id, runId)))[0]?.status;
    await timeOutRuns({ db: db(), now: row!.deadlineAt.getTime() - 1 });
    expect(await status()).toBe("queued");
    expect(await timeOutRuns({ db: db(), now: row!.deadlineAt.getTime() })).toBeGreaterThanOrEqual(1);
    expect((await runs(admin, workflowId)).runs[0]).toMatchObject({ runId, status: "timed_out" });
    // The hand-over of a run that already ended is dropped, not sent.
    await deliver(runId);
    expect(n8n.received.some((r) => r.runId === runId)).toBe(false);
    const raw = JSON.stringify({ runId, status: "succeeded" });
    const late = await t.request(STATUS, { method: "POST", headers: { "content-type": "application/json", "x-workflow-signature": `sha256=${await hmacSha256Hex(SECRET, raw)}` }, body: raw });
    expect(late.status).toBe(409);
  });

  it("retries a hand-over the engine refuses, and fails the run when the attempts are used up", async () => {
    const admin = await newUser(env.issuer, { admin: true });
    const workflowId = await syncedWorkflow(admin);
    const res = await post(`${BASE}/${workflowId}/run`, {}, admin.headers);
    const { runId } = (await res.json()) as { runId: string };
    n8n.failWebhooks([500]);
    await deliver(runId);
    const [msg] = await db().select().from(outboxMessages).where(sql`${outboxMessages.body} like ${`%${runId}%`}`);
    expect(msg).toMatchObject({ status: "pending", attempts: 1, lastError: "HTTP 500: Error in workflow" });
    // The last attempt: the run fails with the engine's answer.
    await db().update(outboxMessages).set({ attempts: 9, nextAttemptAt: new Date(0) }).where(eq(outboxMessages.id, msg!.id));
    n8n.failWebhooks([500]);
    await deliver(runId);
    expect((await runs(admin, workflowId)).runs[0]).toMatchObject({ runId, status: "failed", error: expect.stringContaining("HTTP 500") });
  });
});

describe("runs started by platform events", () => {
  it("starts one run per stored event and workflow, however many passes run at once", async () => {
    const admin = await newUser(env.issuer, { admin: true });
    const body = sampleWorkflow("on accepted winks");
    body.nodes[0] = { id: "start", type: "trigger", data: { event: "wink.accepted" } };
    const saved = await saveWorkflow(t, admin, body);
    const [user] = await queryRows<{ id: string }>(db(), sql`select id from users where subject = ${admin.sub}`);
    const userId = user!.id;
    // Stored before the workflow was first synced: not a run.
    await db().execute(sql`insert into events (user_id, type, data, created_at) values (${userId}, 'wink.accepted', '{"userId":"usr_before"}'::jsonb, now() - interval '1 minute')`);
    const synced = await t.request(`${BASE}/${saved.workflowId}/sync`, { method: "POST", headers: admin.headers });
    expect(synced.status).toBe(200);
    for (let i = 0; i < 3; i++) {
      await db().execute(sql`insert into events (user_id, type, data, created_at) values (${userId}, 'wink.accepted', ${JSON.stringify({ userId: `usr_${i}` })}::jsonb, now() + interval '1 second')`);
    }
    await db().execute(sql`insert into events (user_id, type, data, created_at) values (${userId}, 'match.created', '{"userId":"usr_m"}'::jsonb, now() + interval '1 second')`);

    const d = { db: db(), config: t.deps.config, ids: t.deps.ids, random: t.deps.random, now: Date.now() + 5_000, logger: t.deps.logger };
    const started = await Promise.all(Array.from({ length: 6 }, () => startEventRuns(d)));
    const mine = await db().select().from(workflowRuns).where(eq(workflowRuns.workflowId, saved.workflowId));
    expect(mine).toHaveLength(3);
    expect(new Set(mine.map((r) => r.eventId)).size).toBe(3);
    expect(mine.every((r) => r.trigger === "wink.accepted" && r.input.userId === userId)).toBe(true);
    expect(mine.map((r) => (r.input.event as { data: { userId: string } }).data.userId).sort()).toEqual(["usr_0", "usr_1", "usr_2"]);
    expect(started.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(3);
    const handovers = await db().select().from(outboxMessages).where(and(eq(outboxMessages.kind, "workflow.run"), eq(outboxMessages.targetId, saved.workflowId)));
    expect(handovers).toHaveLength(3);
    // A later pass finds nothing new.
    await startEventRuns(d);
    expect(await db().select().from(workflowRuns).where(eq(workflowRuns.workflowId, saved.workflowId))).toHaveLength(3);
  });
  it("reads from a little before its last complete pass: an event stored within the settling time still starts a run, an older one is not read", async () => {
    const admin = await newUser(env.issuer, { admin: true });
    const body = sampleWorkflow("on received winks");
    body.nodes[0] = { id: "start", type: "trigger", data: { event: "wink.received" } };
    const workflowId = await syncedWorkflow(admin, body);
    const [user] = await queryRows<{ id: string }>(db(), sql`select id from users where subject = ${admin.sub}`);
    const mark = Date.now() + 60_000;
    // Active for an hour, so that only the mark keeps the pass from reading the older event.
    await db().update(messagingWorkflows).set({ activatedAt: new Date(mark - 3_600_000) }).where(eq(messagingWorkflows.id, workflowId));
    const d = { db: db(), config: t.deps.config, ids: t.deps.ids, random: t.deps.random, now: mark, logger: t.deps.logger };
    await startEventRuns(d);
    const [wf] = await db().select().from(messagingWorkflows).where(eq(messagingWorkflows.id, workflowId));
    expect(wf?.eventsScannedTo?.getTime()).toBe(mark);
    // Both committed after that pass; one began 5 minutes before it, the other 20 minutes before.
    for (const [label, minutes] of [["settling", 5], ["stale", 20]] as const) {
      await db().execute(sql`insert into events (user_id, type, data, created_at)
        values (${user!.id}, 'wink.received', ${JSON.stringify({ label })}::jsonb, ${new Date(mark - minutes * 60_000).toISOString()}::timestamptz)`);
    }
    await startEventRuns({ ...d, now: mark + 5_000 });
    const mine = await db().select().from(workflowRuns).where(eq(workflowRuns.workflowId, workflowId));
    expect(mine.map((r) => (r.input.event as { data: { label: string } }).data.label)).toEqual(["settling"]);
  });
  it("starts one run per subscription purchase for a subscription.started workflow", async () => {
    const admin = await newUser(env.issuer, { admin: true });
    const body = sampleWorkflow("on subscriptions");
    body.nodes[0] = { id: "start", type: "trigger", data: { event: "subscription.started" } };
    const workflowId = await syncedWorkflow(admin, body);
    const member = await signIn(t, env.issuer);
    await award(t, admin, member.id, 10_000);
    for (let i = 0; i < 2; i++) {
      const res = await post("/api/v1/subscriptions", { planId: "premium" }, member.headers);
      expect(res.status, await res.clone().text()).toBe(201);
    }
    const d = { db: db(), config: t.deps.config, ids: t.deps.ids, random: t.deps.random, now: Date.now() + 5_000, logger: t.deps.logger };
    await Promise.all(Array.from({ length: 4 }, () => startEventRuns(d)));
    const mine = await db().select().from(workflowRuns).where(eq(workflowRuns.workflowId, workflowId));
    expect(mine).toHaveLength(2);
    expect(mine.every((r) => r.trigger === "subscription.started" && r.input.userId === member.id)).toBe(true);
    const charges = await queryRows<{ transaction_id: string }>(db(), sql`select transaction_id from subscription_charges where user_id = ${member.id}`);
    expect(mine.map((r) => (r.input.event as { data: { planId: string; transactionId: string } }).data).sort((a, b) => a.transactionId.localeCompare(b.transactionId))).toEqual(
      charges.map((c) => ({ planId: "premium", coins: expect.any(Number), transactionId: c.transaction_id })).sort((a, b) => a.transactionId.localeCompare(b.transactionId)),
    );
    await startEventRuns(d);
    expect(await db().select().from(workflowRuns).where(eq(workflowRuns.workflowId, workflowId))).toHaveLength(2);
  });
});
