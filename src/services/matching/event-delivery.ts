import type { Db } from "../../db/port";
import type { HubStream } from "./event-hub";

/** An open event stream as the delivery port sees it. */
export interface DeliveredStream extends HubStream {
  /** The stream's own database session: per-stream delivery reads on it, the shared hub on its pool. */
  readonly db: Db;
  /** Ends the stream after a read it cannot recover from: logged, and the client told which request's log holds it. */
  fail(err: unknown): void;
}

/**
 * The delivery port: how the new events of open streams are found and handed to them. The
 * streams themselves (their bytes, guards and session) are the same everywhere; only the
 * scheduling differs by runtime. On Node one hub per app instance reads for every stream on a
 * shared timer (`createEventHub`); on Workers I/O belongs to the request that started it, so each
 * stream reads and beats on its own (`createPerStreamDelivery`).
 */
export interface EventDelivery {
  /** Registers an open stream; its reads begin with what is stored after its cursor. */
  add(stream: DeliveredStream): Promise<void>;
  remove(stream: DeliveredStream): void;
  /** Ends every open stream and lets go of every subscription and timer (the process is stopping). */
  closeAll(): void;
}
