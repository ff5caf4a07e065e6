import type { SQL } from "drizzle-orm";
import type { Db } from "./port";

/** Raw SQL rows; every driver we use (pg, PGlite, Neon) answers execute() with `{ rows }`. */
export async function queryRows<T extends Record<string, unknown>>(db: Db, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}
