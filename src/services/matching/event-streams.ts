import type { Database, Db } from "../../db/port";
import { loggedError } from "../../platform/logged-error";
import type { Logger } from "../../platform/logger";
import type { DeliveredStream, EventDelivery } from "./event-delivery";
import { latestEventId, type StoredEvent } from "./events";

/** A comment line goes out at least this often, so proxies and clients keep an idle stream open (< 25 s). */
export const HEARTBEAT_MS = 20_000;
/**
 * Where the KV store cannot subscribe (Upstash's REST API on Workers holds no connection), a
 * stream polls the outbox this often instead of waiting for notifications; stored events still
 * reach it, within this delay. With a subscribing store a notification wakes the read at once, and
 * the outbox is re-read anyway on each heartbeat.
 */
export const POLL_MS = 2_000;
/** The reconnection delay suggested to EventSource clients. */
export const RETRY_MS = 2_000;

/** What keeps a stream within bounds while it is open (its person's stream slot, its credential). */
export interface StreamWatch {
  /** The stream is open (starts the clock on the credential's expiry). */
  start(): void;
  /** On each heartbeat, with the stream's database (renews the slot, re-checks an API key). */
  heartbeat(db: Db): void;
  /** The stream is over, however it ended. */
  stop(): void;
}

export interface StreamRequest {
  /** The authenticated person whose events the stream carries. */
  userId: string;
  /** Last-Event-ID; without it the stream starts after the newest stored event. */
  afterId?: number;
  /** Named in the log, and in the comment a failed stream ends with. */
  requestId: string;
  /** Builds the stream's watch; `end` ends the stream (its credential stopped being valid). */
  watch(end: () => void): StreamWatch;
}

export interface EventStreams {
  /**
   * Opens a person's live event stream as SSE bytes: the opening lines, then what was stored after
   * the cursor, then each new event once, in id order, with its id, and a heartbeat comment. The
   * cursor is fixed before this returns, so an event stored once the caller holds the stream is sent.
   */
  open(request: StreamRequest): Promise<ReadableStream<Uint8Array>>;
  /** Ends every open stream (the process is stopping). */
  closeAll(): void;
}

const encoder = new TextEncoder();
const HEAD = encoder.encode(`retry: ${RETRY_MS}\n: connected\n\n`);
const HEARTBEAT = encoder.encode(": heartbeat\n\n");

/**
 * The event-stream service: one delivery path for every runtime. A stream is a bare
 * ReadableStream that the delivery port writes to while the client holds it; the port (the
 * shared hub on Node, a read loop per stream on Workers) decides only when reads happen.
 */
export function createEventStreams(options: { database: Database; delivery: EventDelivery; logger: Logger }): EventStreams {
  const { database, delivery, logger } = options;
  return {
    async open(request) {
      const { userId, requestId } = request;
      // The stream outlives the request's own session (released when the handler returns; on
      // Workers that ends its connection), so it holds a session of its own until it closes.
      // Where sessions share one pool (Node) there is nothing to hold.
      const session = database.session();
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        session.release?.().catch(() => {});
      };
      let start: number;
      try {
        start = request.afterId ?? (await latestEventId(session.db, userId));
      } catch (err) {
        release();
        throw err;
      }

      let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
      /** The stream is over for good, however it ended. */
      const gone = () => {
        controller = undefined;
        watch.stop();
        release();
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
      const close = () => {
        const ctrl = controller;
        gone();
        try {
          ctrl?.close();
        } catch {
          // Already cancelled by the client.
        }
      };
      const entry: DeliveredStream = {
        userId,
        lastId: start,
        db: session.db,
        deliver: (events: StoredEvent[]) => send(encoder.encode(events.map(formatEvent).join(""))),
        heartbeat: () => {
          if (!send(HEARTBEAT)) return false;
          watch.heartbeat(session.db);
          return true;
        },
        close,
        fail(err) {
          // The client reconnects with Last-Event-ID, so nothing is lost; the comment only names
          // the request whose log line holds the cause (never the error itself: SQL and its values).
          logger.error("match event stream failed", { requestId, userId, error: loggedError(err) });
          send(encoder.encode(`: error ${requestId}\n\n`));
          close();
          delivery.remove(entry);
        },
      };
      const watch = request.watch(() => {
        close();
        delivery.remove(entry);
      });
      return new ReadableStream<Uint8Array>({
        start(ctrl) {
          controller = ctrl;
          ctrl.enqueue(HEAD);
          watch.start();
          delivery.add(entry).catch((err: unknown) => {
            logger.error("match event stream failed", { requestId, userId, error: loggedError(err) });
            delivery.remove(entry);
            // A stream nothing reads for would only ever get the opening lines: ending it lets
            // the client reconnect with Last-Event-ID.
            close();
          });
        },
        cancel() {
          gone();
          delivery.remove(entry);
        },
      });
    },
    closeAll: () => delivery.closeAll(),
  };
}

/** An event as SSE; JSON has no raw line breaks, so the data is one line. */
function formatEvent(event: StoredEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event.data)}\nid: ${event.id}\n\n`;
}
