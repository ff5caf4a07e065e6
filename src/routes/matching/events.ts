import type { Context } from "hono";
import { streamSSE, type SSEStreamingApi } from "hono/streaming";
import { ApiError } from "../../errors";
import { loggedError } from "../../platform/logged-error";
import type { Principal } from "../../auth/principal";
import type { AppEnv } from "../../http/env";
import type { EventHub, HubStream } from "../../services/matching/event-hub";
import { eventChannel, eventsAfter, latestEventId, type StoredEvent } from "../../services/matching/events";
import { takeSlot, watchCredential, type StreamSlot } from "./stream-guards";

/** A comment line goes out at least this often, so proxies and clients keep an idle stream open (< 25 s). */
export const HEARTBEAT_MS = 20_000;
/**
 * Where the KV store cannot subscribe (Upstash's REST API on Workers holds no connection), the
 * stream polls the outbox this often instead of waiting for notifications; stored events still
 * reach it, within this delay. With a subscribing store (Redis on Node, the in-memory store) a
 * notification wakes the stream at once, and it re-reads the outbox anyway on each heartbeat.
 */
export const POLL_MS = 2_000;
/** The reconnection delay suggested to EventSource clients. */
const RETRY_MS = 2_000;

/** Last-Event-ID (header, or the `lastEventId` query parameter for clients that cannot set headers). */
function lastEventIdOf(c: Context<AppEnv>): number | undefined {
  const raw = c.req.header("last-event-id") ?? c.req.query("lastEventId");
  if (raw === undefined || raw.trim() === "") return undefined;
  if (!/^\d{1,15}$/.test(raw.trim())) {
    throw new ApiError("invalid_input", "Last-Event-ID must be the id of an event", { details: [{ path: "(header) last-event-id", message: "a non-negative integer" }] });
  }
  return Number(raw.trim());
}

/**
 * The caller's live match events as server-sent events. The stream first replays what was stored
 * after Last-Event-ID (without it, it starts after the newest stored event), then waits for
 * notifications (or polls) and sends each new event once, in id order, with its id. It ends when
 * the client goes away, when its credential stops being valid, or when the process stops.
 */
export async function matchEventStream(c: Context<AppEnv>, principal: Principal): Promise<Response> {
  const { deps } = c.var;
  const { userId } = principal;
  const requested = lastEventIdOf(c);
  // HEAD gets a GET's headers and no stream: Hono drops a HEAD answer's body without cancelling
  // it, so a stream opened for one would never learn that nobody reads it (its subscription,
  // polling and heartbeats would live on).
  if (c.req.method === "HEAD") return new Response(null, { status: 200, headers: SSE_HEADERS });
  // The process is stopping and ends every stream: a new one would hold the server open. The
  // client is told to come back (to another instance, or this one restarted).
  if (deps.stopping?.aborted) return new Response(`retry: ${RETRY_MS}\n\n`, { status: 200, headers: SSE_HEADERS });
  const slot = await takeSlot(c, userId);
  // The stream outlives the request's own session (released when the handler returns; on
  // Workers that ends its connection), so it holds a session of its own until it closes.
  const session = deps.database.session();
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await session.release?.().catch(() => {});
  };
  let start: number;
  try {
    // Fixed before the answer goes out: an event made once the client holds the response is sent.
    start = requested ?? (await latestEventId(session.db, userId));
  } catch (err) {
    await release();
    slot.release();
    throw err;
  }

  const hub = c.var.runtime.events;
  if (hub) {
    // On Node the session is the shared pool's: nothing to hold; the hub reads for the stream.
    await release();
    return hubStream(c, hub, principal, start, slot);
  }

  const requestId = c.get("requestId");
  const { streamClosers } = c.var.runtime;
  // Every failure is caught inside: Hono's helper would send a thrown error's message to the
  // client as an `error` event (SQL text with its bound values), and EventSource takes an event
  // of that name for a failed connection.
  return streamSSE(c, async (stream: SSEStreamingApi) => {
    let lastId = start;
    let wake: (() => void) | undefined;
    let pending = false;
    const signal = () => {
      pending = true;
      wake?.();
    };
    let unsubscribe: (() => void) | undefined;
    let heartbeat: ReturnType<typeof setInterval> | undefined;
    let stopped = false;
    const stop = () => {
      stopped = true;
      signal();
    };
    stream.onAbort(signal);
    streamClosers.add(stop);
    const credential = watchCredential(c, principal, () => session.db, stop);
    try {
      const subscribe = deps.kv.subscribe?.bind(deps.kv);
      if (subscribe) {
        try {
          unsubscribe = await subscribe(eventChannel(userId), signal);
        } catch (err) {
          deps.logger.warn("event subscription failed; polling the outbox", { requestId, userId, error: loggedError(err) });
        }
      }
      // Subscribed: the loop sleeps until a notification, re-reading now and then as a safety net.
      const waitMs = unsubscribe ? HEARTBEAT_MS : POLL_MS;
      await stream.write(`retry: ${RETRY_MS}\n: connected\n\n`);
      // A comment line; EventSource ignores it. Writes queue on the stream, so it never splits an event.
      heartbeat = setInterval(() => {
        void stream.write(": heartbeat\n\n");
        slot.renew();
        credential.heartbeat();
      }, HEARTBEAT_MS);
      credential.start();

      while (!stream.aborted && !stream.closed && !stopped) {
        pending = false;
        for (;;) {
          const batch = await eventsAfter(session.db, userId, lastId);
          for (const event of batch) {
            if (stream.aborted) break;
            await stream.writeSSE({ id: String(event.id), event: event.type, data: JSON.stringify(event.data) });
            lastId = event.id;
          }
          if (batch.length < 100 || stream.aborted || stopped) break;
        }
        if (stream.aborted || stopped || pending) continue;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, waitMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
    } catch (err) {
      // The stream ends and the client reconnects with Last-Event-ID, so nothing is lost; the
      // comment only names the request whose log line holds the cause.
      deps.logger.error("match event stream failed", { requestId, userId, error: loggedError(err) });
      await stream.write(`: error ${requestId}\n\n`);
    } finally {
      credential.stop();
      slot.release();
      streamClosers.delete(stop);
      if (heartbeat !== undefined) clearInterval(heartbeat);
      try {
        unsubscribe?.();
      } catch (err) {
        deps.logger.warn("ending an event subscription failed", { requestId, userId, error: loggedError(err) });
      }
      await release();
    }
  });
}

const SSE_HEADERS: Record<string, string> = { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive" };

/** One encoder for every stream (Hono's streaming helper makes one per stream). */
const encoder = new TextEncoder();
const HEAD = encoder.encode(`retry: ${RETRY_MS}\n: connected\n\n`);
const HEARTBEAT = encoder.encode(": heartbeat\n\n");

/**
 * The stream where the event hub serves it (Node): a bare ReadableStream that the hub writes to,
 * registered with the hub while the client holds it, and little else per stream (no task of its
 * own, no interval, no subscription: the hub's heartbeat, batched reads and per-person
 * subscription do the work; its own are one timeout for the credential's expiry and its slot's
 * lease, renewed on the hub's heartbeat).
 */
function hubStream(c: Context<AppEnv>, hub: EventHub, principal: Principal, start: number, slot: StreamSlot): Response {
  const { userId } = principal;
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  /** The stream is over for good, however it ended. */
  const gone = () => {
    controller = undefined;
    slot.release();
    credential.stop();
  };
  const send = (bytes: Uint8Array): boolean => {
    if (!controller) return false;
    try {
      controller.enqueue(bytes);
      return true;
    } catch {
      // Closed or errored underneath: the client is gone.
      gone();
      return false;
    }
  };
  const entry: HubStream = {
    userId,
    lastId: start,
    deliver: (events: StoredEvent[]) => send(encoder.encode(events.map(formatEvent).join(""))),
    heartbeat: () => {
      if (!send(HEARTBEAT)) return false;
      slot.renew();
      credential.heartbeat();
      return true;
    },
    close: () => {
      const ctrl = controller;
      gone();
      try {
        ctrl?.close();
      } catch {
        // Already cancelled by the client.
      }
    },
  };
  // On Node every session is the shared pool's.
  const credential = watchCredential(c, principal, () => c.get("deps").database.session().db, () => {
    entry.close();
    hub.remove(entry);
  });
  const body = new ReadableStream<Uint8Array>({
    start(ctrl) {
      controller = ctrl;
      ctrl.enqueue(HEAD);
      credential.start();
      hub.add(entry).catch((err: unknown) => {
        c.var.deps.logger.error("match event stream failed", { requestId: c.get("requestId"), userId, error: loggedError(err) });
        hub.remove(entry);
        // A stream the hub does not serve would only ever get the opening lines: ending it
        // lets the client reconnect with Last-Event-ID.
        entry.close();
      });
    },
    cancel() {
      gone();
      hub.remove(entry);
    },
  });
  for (const [name, value] of Object.entries(SSE_HEADERS)) c.header(name, value);
  return c.body(body, 200);
}

/** An event as SSE; JSON has no raw line breaks, so the data is one line. */
function formatEvent(event: StoredEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event.data)}\nid: ${event.id}\n\n`;
}
