import type { Db } from "../../db/port";
import type { KeyValueStore } from "../../kv/port";
import { loggedError } from "../../platform/logged-error";
import type { Logger } from "../../platform/logger";
import { eventChannel, eventsAfterBatch, type StoredEvent } from "./events";

/**
 * The per-process dispatcher of live match events (the shared-timer implementation of the
 * delivery port, `EventDelivery`), for processes whose KV store can subscribe and whose database
 * sessions share one pool (Node). On Workers (Upstash cannot subscribe; a stream must use a
 * session of its own) each stream reads on its own instead (`createPerStreamDelivery`).
 *
 * It keeps a registry userId → open streams and ONE notification subscription per person (not
 * per stream), whatever number of streams that person has open; the subscription is dropped with
 * the person's last stream. A notification only queues the person's id: the queue is drained
 * after a short window, and the new events of everybody in it are read in one query per chunk of
 * people (`eventsAfterBatch`, each person from the lowest cursor of their streams, the block
 * filter applied), then handed to each stream after its own cursor. Reads run side by side (up
 * to MAX_READS), each with a deadline, so one that hangs holds up only its own people, and only
 * until READ_TIMEOUT_MS. One heartbeat interval serves every stream (and doubles as the
 * safety-net re-read); there is no per-stream timer.
 */
export interface HubStream {
  readonly userId: string;
  /** The id of the last event sent; only events after it are sent. */
  lastId: number;
  /** Sends events (already after `lastId`, in id order); returns false once the stream is gone. */
  deliver(events: StoredEvent[]): boolean;
  /** Sends a comment line; returns false once the stream is gone. */
  heartbeat(): boolean;
  /** Ends the stream for the client (who reconnects with Last-Event-ID). */
  close(): void;
}

export interface EventHub {
  /** Registers an open stream and reads what is stored after its cursor. */
  add(stream: HubStream): Promise<void>;
  remove(stream: HubStream): void;
  /** Ends every open stream and lets go of every subscription and timer (the process is stopping). */
  closeAll(): void;
}

interface Person {
  streams: Set<HubStream>;
  unsubscribe?: () => void;
  /** Set when the subscription failed: the person's events are polled instead. */
  polled?: boolean;
  ready: Promise<void>;
}

/** How long notifications are gathered before one read serves them all. */
export const BATCH_MS = 5;
/** People per query. */
export const CHUNK = 1_000;
/** Events per person and read; a person who had that many is read again at once. */
const PER_PERSON = 100;
/** After a failed read, the people of the chunk are read again after this delay. */
const RETRY_MS = 1_000;
/**
 * A batched read still unanswered after this long counts as failed. No driver has a query
 * timeout of its own, and a read on a connection whose server went away (a failover leaves it
 * half open) or stuck behind a lock would otherwise never settle.
 */
export const READ_TIMEOUT_MS = 10_000;
/**
 * Chunk reads running at once. A read holds only its own people (each person is read by one
 * read at a time, so their streams get each event once and in order); the others' reads go on
 * beside it. While every slot is busy, notifications gather in the queue and the next read
 * takes them all, as one read did before under load.
 */
export const MAX_READS = 4;

class ReadTimeout extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = "ReadTimeout";
  }
}

export function createEventHub(options: {
  kv: KeyValueStore;
  db: () => Db;
  logger: Logger;
  heartbeatMs: number;
  pollMs: number;
  readTimeoutMs?: number;
}): EventHub {
  const { kv, logger } = options;
  const readTimeoutMs = options.readTimeoutMs ?? READ_TIMEOUT_MS;
  const people = new Map<string, Person>();
  /** People due a read, none of whom has one running. */
  const queued = new Set<string>();
  /** People whose read is running. */
  const reading = new Set<string>();
  /** People notified while their read ran: queued again once it ends. */
  const again = new Set<string>();
  let reads = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let pollTimer: ReturnType<typeof setTimeout> | undefined;
  let db: Db | undefined;

  const enqueue = (userId: string) => {
    if (!people.has(userId)) return;
    if (reading.has(userId)) {
      again.add(userId);
      return;
    }
    queued.add(userId);
    schedule();
  };
  const schedule = () => {
    if (timer !== undefined || reads >= MAX_READS || queued.size === 0) return;
    timer = setTimeout(flush, BATCH_MS);
  };

  function flush(): void {
    timer = undefined;
    while (reads < MAX_READS && queued.size > 0) {
      const users: string[] = [];
      for (const userId of queued) {
        users.push(userId);
        if (users.length === CHUNK) break;
      }
      for (const userId of users) {
        queued.delete(userId);
        reading.add(userId);
      }
      reads += 1;
      void read(users).finally(() => {
        reads -= 1;
        for (const userId of users) {
          reading.delete(userId);
          if (again.delete(userId)) enqueue(userId);
        }
        schedule();
      });
    }
  }

  /** The batched read, or a ReadTimeout once it has taken too long (the query itself is left to end on its own). */
  function readBatch(cursors: { userId: string; afterId: number }[]): Promise<Map<string, StoredEvent[]>> {
    db ??= options.db();
    const query = eventsAfterBatch(db, cursors, PER_PERSON);
    let fail: (err: Error) => void = () => {};
    const late = new Promise<never>((_, reject) => (fail = reject));
    const deadline = setTimeout(() => fail(new ReadTimeout(readTimeoutMs)), readTimeoutMs);
    unref(deadline);
    // An abandoned query that fails later has nobody waiting for it.
    query.catch(() => undefined);
    return Promise.race([query, late]).finally(() => clearTimeout(deadline));
  }

  async function read(users: string[]): Promise<void> {
    const cursors: { userId: string; afterId: number }[] = [];
    for (const userId of users) {
      const person = people.get(userId);
      if (!person) continue;
      let afterId = Infinity;
      for (const s of person.streams) afterId = Math.min(afterId, s.lastId);
      if (afterId !== Infinity) cursors.push({ userId, afterId });
    }
    if (cursors.length === 0) return;
    let found: Map<string, StoredEvent[]>;
    try {
      found = await readBatch(cursors);
    } catch (err) {
      logger.warn("reading match events failed; retrying", { users: cursors.length, error: loggedError(err) });
      unref(setTimeout(() => cursors.forEach((c) => enqueue(c.userId)), RETRY_MS));
      return;
    }
    const readFrom = new Map(cursors.map((c) => [c.userId, c.afterId]));
    for (const [userId, events] of found) {
      const person = people.get(userId);
      if (!person) continue;
      const afterId = readFrom.get(userId) ?? Infinity;
      let behind = false;
      for (const s of [...person.streams]) {
        // A stream that joined while this read ran (a reconnect with an older Last-Event-ID)
        // wants events from before where the read began: this result would skip them for it.
        if (s.lastId < afterId) {
          behind = true;
          continue;
        }
        const fresh = events.filter((e) => e.id > s.lastId);
        if (fresh.length === 0) continue;
        s.lastId = fresh[fresh.length - 1]!.id;
        if (!s.deliver(fresh)) remove(s);
      }
      if (behind || events.length >= PER_PERSON) enqueue(userId);
    }
  }

  const beat = () => {
    for (const [userId, person] of people) {
      for (const s of [...person.streams]) if (!s.heartbeat()) remove(s);
      // The safety net: a lost notification is made up for here.
      enqueue(userId);
    }
  };

  const poll = () => {
    pollTimer = undefined;
    let any = false;
    for (const [userId, person] of people) {
      if (!person.polled) continue;
      any = true;
      enqueue(userId);
    }
    if (any) startPolling();
  };
  const startPolling = () => {
    if (pollTimer !== undefined) return;
    pollTimer = setTimeout(poll, options.pollMs);
    unref(pollTimer);
  };

  function remove(stream: HubStream): void {
    const person = people.get(stream.userId);
    if (!person || !person.streams.delete(stream)) return;
    if (person.streams.size > 0) return;
    people.delete(stream.userId);
    queued.delete(stream.userId);
    again.delete(stream.userId);
    person.unsubscribe?.();
    person.unsubscribe = undefined;
    if (people.size === 0 && heartbeat !== undefined) {
      clearInterval(heartbeat);
      heartbeat = undefined;
    }
  }

  return {
    async add(stream) {
      let person = people.get(stream.userId);
      if (!person) {
        const created: Person = { streams: new Set(), ready: Promise.resolve() };
        const { userId } = stream;
        const subscribe = kv.subscribe?.bind(kv);
        created.ready = subscribe
          ? subscribe(eventChannel(userId), () => enqueue(userId)).then(
              (unsubscribe) => {
                // The last stream may have left while the subscription was being made.
                if (people.get(userId) === created) created.unsubscribe = unsubscribe;
                else unsubscribe();
              },
              (err: unknown) => {
                logger.warn("event subscription failed; polling the outbox", { userId, error: loggedError(err) });
                created.polled = true;
                startPolling();
              },
            )
          : Promise.resolve().then(() => {
              created.polled = true;
              startPolling();
            });
        person = created;
        people.set(userId, person);
      }
      person.streams.add(stream);
      heartbeat ??= setInterval(beat, options.heartbeatMs);
      await person.ready;
      // Subscribed: whatever is stored after the cursor now (the replay, and anything stored
      // before the subscription was active) is read with the next batch.
      enqueue(stream.userId);
    },
    remove,
    closeAll() {
      for (const person of [...people.values()]) {
        for (const s of [...person.streams]) {
          s.close();
          remove(s);
        }
      }
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      if (pollTimer !== undefined) clearTimeout(pollTimer);
      pollTimer = undefined;
    },
  };
}

/** Lets Node exit with the timer pending (Workers timers are plain numbers). */
function unref(timer: unknown): void {
  (timer as { unref?: () => void }).unref?.();
}
