import type { KeyValueStore } from "../../kv/port";
import { loggedError } from "../../platform/logged-error";
import type { Logger } from "../../platform/logger";
import type { DeliveredStream, EventDelivery } from "./event-delivery";
import { eventChannel, eventsAfter } from "./events";

/** Events per read; a stream that had that many is read again at once. */
const PER_READ = 100;

/**
 * Delivery where one process-wide timer cannot serve every stream: on Workers I/O belongs to the
 * request that started it, and each stream reads on a database session of its own (Neon opens a
 * pool per session). Each stream gets its own read loop and heartbeat, started from within its
 * request. It subscribes where the store can (a notification wakes it at once; the heartbeat
 * re-reads as a safety net) and polls the outbox every `pollMs` where it cannot (Upstash's REST
 * API holds no connection). A read that fails ends the stream; the client reconnects with
 * Last-Event-ID, so nothing is lost.
 */
export function createPerStreamDelivery(options: { kv: KeyValueStore; logger: Logger; heartbeatMs: number; pollMs: number }): EventDelivery {
  const { kv, logger } = options;
  /** Each open stream's stop. */
  const running = new Map<DeliveredStream, () => void>();

  async function serve(stream: DeliveredStream): Promise<void> {
    const { userId } = stream;
    let stopped = false;
    let pending = false;
    let wake: (() => void) | undefined;
    const signal = () => {
      pending = true;
      wake?.();
    };
    running.set(stream, () => {
      stopped = true;
      signal();
    });
    let unsubscribe: (() => void) | undefined;
    const subscribe = kv.subscribe?.bind(kv);
    if (subscribe) {
      try {
        unsubscribe = await subscribe(eventChannel(userId), signal);
      } catch (err) {
        logger.warn("event subscription failed; polling the outbox", { userId, error: loggedError(err) });
      }
    }
    const waitMs = unsubscribe ? options.heartbeatMs : options.pollMs;
    const heartbeat = setInterval(() => {
      if (!stream.heartbeat()) running.get(stream)?.();
    }, options.heartbeatMs);

    const loop = async () => {
      while (!stopped) {
        pending = false;
        for (;;) {
          const batch = await eventsAfter(stream.db, userId, stream.lastId, PER_READ);
          if (stopped) return;
          if (batch.length > 0) {
            stream.lastId = batch[batch.length - 1]!.id;
            if (!stream.deliver(batch)) return;
          }
          if (batch.length < PER_READ) break;
        }
        if (pending || stopped) continue;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, waitMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
    };
    void loop()
      .catch((err: unknown) => stream.fail(err))
      .finally(() => {
        clearInterval(heartbeat);
        running.delete(stream);
        try {
          unsubscribe?.();
        } catch (err) {
          logger.warn("ending an event subscription failed", { userId, error: loggedError(err) });
        }
      });
  }

  return {
    add: serve,
    remove(stream) {
      running.get(stream)?.();
    },
    closeAll() {
      for (const [stream, stop] of [...running]) {
        stop();
        stream.close();
      }
    },
  };
}
