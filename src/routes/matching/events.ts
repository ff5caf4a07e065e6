import type { Context } from "hono";
import { ApiError } from "../../errors";
import type { Principal } from "../../auth/principal";
import type { AppEnv } from "../../http/env";
import { RETRY_MS, type StreamWatch } from "../../services/matching/event-streams";
import { takeSlot, watchCredential } from "./stream-guards";

const SSE_HEADERS: Record<string, string> = { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive" };

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
 * The caller's live match events as server-sent events (the event-stream service yields the
 * bytes). It ends when the client goes away, when its credential stops being valid, or when the
 * process stops.
 */
export async function matchEventStream(c: Context<AppEnv>, principal: Principal): Promise<Response> {
  const { deps } = c.var;
  const { userId } = principal;
  const afterId = lastEventIdOf(c);
  // HEAD gets a GET's headers and no stream: Hono drops a HEAD answer's body without cancelling
  // it, so a stream opened for one would never learn that nobody reads it (its subscription,
  // reads and heartbeats would live on).
  if (c.req.method === "HEAD") return new Response(null, { status: 200, headers: SSE_HEADERS });
  // The process is stopping and ends every stream: a new one would hold the server open. The
  // client is told to come back (to another instance, or this one restarted).
  if (deps.stopping?.aborted) return new Response(`retry: ${RETRY_MS}\n\n`, { status: 200, headers: SSE_HEADERS });
  // Before the stream takes a database session: a person's open streams are capped.
  const slot = await takeSlot(c, userId);
  const watch = (end: () => void): StreamWatch => {
    const credential = watchCredential(c, principal, end);
    return {
      start: () => credential.start(),
      heartbeat(db) {
        slot.renew();
        credential.heartbeat(db);
      },
      stop() {
        credential.stop();
        slot.release();
      },
    };
  };
  let body: ReadableStream<Uint8Array>;
  try {
    body = await c.var.runtime.events.open({ userId, afterId, requestId: c.get("requestId"), watch });
  } catch (err) {
    slot.release();
    throw err;
  }
  for (const [name, value] of Object.entries(SSE_HEADERS)) c.header(name, value);
  return c.body(body, 200);
}
