import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import type { KeyValueStore } from "../../kv/port";

export type CheckState = "ok" | "down";

export interface HealthReport {
  status: "ok" | "degraded" | "unavailable";
  version: string;
  checks: { database: CheckState; store: CheckState };
}

const CHECK_TIMEOUT_MS = 2000;

/** A check that hangs counts as down: a health probe must answer quickly whatever happens. */
async function probe(run: () => Promise<unknown>): Promise<CheckState> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<CheckState>((resolve) => {
    timer = setTimeout(() => resolve("down"), CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([run().then((): CheckState => "ok", (): CheckState => "down"), timeout]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/**
 * The database is required to serve anything, so its loss makes the service unavailable. The
 * store only backs rate limits and caches, which fail open, so its loss degrades the service.
 */
export async function checkHealth(db: Db, kv: KeyValueStore, version: string): Promise<HealthReport> {
  const [database, store] = await Promise.all([probe(() => db.execute(sql`select 1`)), probe(() => kv.ping())]);
  const status = database === "down" ? "unavailable" : store === "down" ? "degraded" : "ok";
  return { status, version, checks: { database, store } };
}
