import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import pg from "pg";
import type { Database, Db } from "../db/port";
import * as schema from "../db/schema";
import type { Logger } from "../platform/logger";
import { lockDataDir } from "./data-dir-lock";

/** A Node database plus the handle migrations need to hold a lock on one connection. */
export interface NodeDatabase extends Database {
  readonly db: Db;
  /** Runs `fn` on one dedicated connection (advisory locks are per connection). */
  withConnection<T>(fn: (db: Db) => Promise<T>): Promise<T>;
}

export function createPgDatabase(url: string, options: { max?: number; logger?: Logger } = {}): NodeDatabase {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client that loses its server emits 'error' on the pool; unhandled, it would crash the process.
  pool.on("error", (err) => options.logger?.warn("postgres pool client error", { err: err.message }));
  // The pool listens only while a client is idle. A checked-out client whose server goes away
  // (backend terminated, network cut mid-transaction) emits 'error' with nobody listening, which
  // crashes the process. Its query fails on its own and release() drops the dead client, so
  // here the error only needs a listener.
  pool.on("connect", (client) => {
    client.on("error", (err) => options.logger?.warn("postgres client error", { err: err.message }));
  });
  const db = drizzlePg({ client: pool, schema }) as unknown as Db;
  return {
    driver: "pg",
    db,
    session: () => ({ db }),
    async withConnection(fn) {
      const client = await pool.connect();
      try {
        return await fn(drizzlePg({ client, schema }) as unknown as Db);
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

/**
 * The embedded default: PostgreSQL compiled to WASM, stored under DATA_DIR. A new data dir runs
 * initdb (about 7 s); reopening takes under a second. One process at a time may open it: a
 * second one (another server, or `npm run db:migrate` while a server runs) fails at once.
 */
export async function openPgliteDatabase(dataDir: string, logger: Logger): Promise<NodeDatabase> {
  const dir = resolve(dataDir, "pglite");
  const fresh = !existsSync(join(dir, "PG_VERSION"));
  mkdirSync(dir, { recursive: true });
  const unlock = lockDataDir(resolve(dataDir));
  logger.info(
    fresh
      ? "initialising the embedded database (first start only, about 7 seconds)"
      : "opening the embedded database",
    { dataDir: dir },
  );
  const started = Date.now();
  let client: PGlite;
  try {
    client = await PGlite.create(dir);
  } catch (err) {
    unlock();
    throw err;
  }
  logger.info("embedded database ready", { ms: Date.now() - started });
  const db = drizzlePglite({ client, schema }) as unknown as Db;
  return {
    driver: "pglite",
    db,
    session: () => ({ db }),
    // PGlite is a single connection already.
    withConnection: (fn) => fn(db),
    close: async () => {
      try {
        await client.close();
      } finally {
        unlock();
      }
    },
  };
}
