import { env } from "cloudflare:workers";
import { createExecutionContext, createMessageBatch, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { describe, expect, inject, it, vi } from "vitest";
import { createWorker, type WorkerEnv } from "../../workers/api";
import { accessToken } from "./access-token";
import { workerBindings } from "./bindings";
import { waitFor } from "../support/wait";

// Partner webhooks on the Workers runtime: a change commits, its outbox message's id goes to the
// Cloudflare Queue (the real one of wrangler.toml, run by the test pool), the Worker's queue
// consumer delivers it to a partner endpoint on loopback, and the signature is checked here with
// `standardwebhooks`, as a partner would. The cron delivers what never reached the queue.

const worker = createWorker();
const bindings = workerBindings(env, "partners");
/** The same Worker with no queue bound: its messages reach only the cron. */
const withoutQueue: WorkerEnv = { ...bindings, OUTBOX_QUEUE: undefined };


type Body = Record<string, any>;

async function call(path: string, init: RequestInit, on: { worker?: ReturnType<typeof createWorker>; env?: WorkerEnv } = {}): Promise<{ status: number; body: Body }> {
  const ctx = createExecutionContext();
  const res = await (on.worker ?? worker).fetch(new Request(`http://api.test${path}`, init), on.env ?? bindings, ctx);
  const body = (await res.json()) as Body;
  await waitOnExecutionContext(ctx);
  return { status: res.status, body };
}

const send = (method: string, path: string, headers: Record<string, string>, body: unknown, on?: Parameters<typeof call>[2]) =>
  call(path, { method, headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) }, on);

async function signIn(): Promise<Record<string, string>> {
  const sub = `partner-${crypto.randomUUID()}`;
  const token = await accessToken(sub);
  return { authorization: `Bearer ${token}` };
}

/** A member who applied as a partner with a webhook on the loopback receiver; returns the secret shown once. */
async function partnerAt(path: string): Promise<{ headers: Record<string, string>; secret: string; partnerId: string }> {
  const headers = await signIn();
  const applied = await send("POST", "/api/v1/partners/apply", headers, {
    companyName: "Rooftop Dates Ltd",
    contactName: "Amina Otieno",
    contactEmail: "amina@rooftop.example",
    description: "Rooftop venue with dinners for two.",
    businessType: "venue",
    country: "KE",
  });
  expect(applied.status, JSON.stringify(applied.body)).toBe(201);
  const profile = await send("PUT", "/api/v1/partner/profile", headers, { webhook: { url: `${inject("webhookReceiverUrl")}${path}` } });
  expect(profile.status, JSON.stringify(profile.body)).toBe(200);
  return { headers, secret: profile.body.webhook.secret as string, partnerId: applied.body.partnerId as string };
}

interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  path: string;
}

async function arrivals(id: string): Promise<Received[]> {
  const res = await fetch(`${inject("webhookReceiverUrl")}/__received`);
  return ((await res.json()) as Received[]).filter((r) => r.id === id);
}

function verify(secret: string, r: Received): unknown {
  return new Webhook(secret).verify(r.body, { "webhook-id": r.id, "webhook-timestamp": r.timestamp, "webhook-signature": r.signature });
}

const deliveryOf = async (headers: Record<string, string>, id: string, on?: Parameters<typeof call>[2]) =>
  ((await call("/api/v1/partner/deliveries", { headers }, on)).body.deliveries as Body[]).find((d) => d.deliveryId === id);

describe("partner webhooks on the Worker", () => {
  it("sends a committed event's id to the queue, and the consumer delivers it signed", async () => {
    const partner = await partnerAt("/hooks/queued");
    const test = await send("POST", "/api/v1/partner/webhook/test", partner.headers, {});
    expect(test.status, JSON.stringify(test.body)).toBe(202);
    const id = test.body.deliveryId as string;

    // Nothing here delivers: only the queue's consumer (this Worker's `queue` handler) can.
    const [arrived] = await waitFor("the queued delivery at the partner's endpoint", () => arrivals(id).then((a) => (a.length > 0 ? a : undefined)), { timeout: 15_000 });
    expect(arrived!.path).toBe("/hooks/queued");
    expect(verify(partner.secret, arrived!)).toEqual({ type: "partner.webhook.test", timestamp: expect.any(String), data: { partnerId: partner.partnerId, message: "This is a test event." } });
    const delivery = await waitFor("the delivery recorded as delivered", async () => {
      const d = await deliveryOf(partner.headers, id);
      return d?.status === "delivered" ? d : undefined;
    });
    expect(delivery.attempts).toEqual([expect.objectContaining({ statusCode: 200, error: null })]);
  });

  it("retries a failed attempt on the outbox's schedule, through the queue, under the same webhook-id", async () => {
    const partner = await partnerAt("/flaky/hooks");
    const test = await send("POST", "/api/v1/partner/webhook/test", partner.headers, {});
    const id = test.body.deliveryId as string;
    // The first attempt fails (500); the consumer hands the id back delayed to the first retry (5 s and jitter).
    const both = await waitFor("a failed attempt and its retry", () => arrivals(id).then((a) => (a.length >= 2 ? a : undefined)), { timeout: 20_000 });
    for (const r of both) expect(verify(partner.secret, r)).toMatchObject({ type: "partner.webhook.test" });
    // Timestamps are whole seconds: a 5 s wait shows as at least 4.
    expect(Number(both[1]!.timestamp) - Number(both[0]!.timestamp)).toBeGreaterThanOrEqual(4);
    const delivery = await waitFor("the retry recorded as delivered", async () => {
      const d = await deliveryOf(partner.headers, id);
      return d?.status === "delivered" ? d : undefined;
    });
    expect(delivery.attempts.map((a: Body) => a.statusCode).sort()).toEqual([200, 500]);
  }, 30_000);

  it("acknowledges a repeated or malformed queue message without sending anything again", async () => {
    const partner = await partnerAt("/hooks/repeat");
    const id = (await send("POST", "/api/v1/partner/webhook/test", partner.headers, {})).body.deliveryId as string;
    await waitFor("the delivery recorded as delivered", async () => (await deliveryOf(partner.headers, id))?.status === "delivered", { timeout: 15_000 });
    const batch = createMessageBatch("dating-platform-outbox", [
      { id: "repeat-1", timestamp: new Date(), attempts: 1, body: { id } },
      { id: "repeat-2", timestamp: new Date(), attempts: 1, body: { id: "'; drop table outbox_messages; --" } },
      { id: "repeat-3", timestamp: new Date(), attempts: 1, body: "not an object" },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, bindings, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result).toMatchObject({ outcome: "ok", ackAll: true, retryMessages: [] });
    expect(result.retryBatch.retry).toBe(false);
    expect(await arrivals(id)).toHaveLength(1);
  });

  it("the cron delivers a message whose id never reached the queue", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const unqueued = createWorker();
    const on = { worker: unqueued, env: withoutQueue };
    const partner = await partnerAt("/hooks/cron");
    const test = await send("POST", "/api/v1/partner/webhook/test", partner.headers, {}, on);
    expect(test.status, JSON.stringify(test.body)).toBe(202);
    const id = test.body.deliveryId as string;
    expect(await arrivals(id)).toEqual([]);
    expect((await deliveryOf(partner.headers, id, on))?.status).toBe("pending");

    const ctx = createExecutionContext();
    await unqueued.scheduled({ cron: "*/5 * * * *", scheduledTime: Date.now() }, withoutQueue, ctx);
    await waitOnExecutionContext(ctx);
    const [arrived] = await arrivals(id);
    expect(verify(partner.secret, arrived!)).toMatchObject({ type: "partner.webhook.test", data: { partnerId: partner.partnerId } });
    expect((await deliveryOf(partner.headers, id, on))?.status).toBe("delivered");
    vi.restoreAllMocks();
  });
});
