import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type * as schema from "./schema";

/** Every driver (PGlite, node-postgres, Neon) yields a drizzle database of this type. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface DbSession {
  db: Db;
  /** Ends the per-request Neon pool on Workers; absent where sessions share one pool. */
  release?: () => Promise<void>;
}

/**
 * The database port. Node keeps one pool for the process; Workers must not share a socket
 * between requests, so the Neon adapter opens a fresh pool per session.
 */
export interface Database {
  readonly driver: "pglite" | "pg" | "neon";
  session(): DbSession;
  close(): Promise<void>;
}
