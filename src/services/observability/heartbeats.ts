import { desc, sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { vmHeartbeats } from "../../db/schema";
import { assertAdmin, type Principal } from "../../auth/principal";

/** A VM that has not reported for this long is shown as stale. */
export const STALE_AFTER_MS = 5 * 60_000;

export async function recordHeartbeat(db: Db, vmId: string, payload: Record<string, unknown>, now: number): Promise<void> {
  const receivedAt = new Date(now);
  await db
    .insert(vmHeartbeats)
    .values({ vmId, payload, receivedAt })
    .onConflictDoUpdate({ target: vmHeartbeats.vmId, set: { payload: sql`excluded.payload`, receivedAt: sql`excluded.received_at` } });
}

export async function latestHeartbeats(db: Db, actor: Principal, now: number) {
  assertAdmin(actor);
  const rows = await db.select().from(vmHeartbeats).orderBy(desc(vmHeartbeats.receivedAt)).limit(500);
  return rows.map((r) => ({
    vmId: r.vmId,
    receivedAt: r.receivedAt.toISOString(),
    stale: now - r.receivedAt.getTime() > STALE_AFTER_MS,
    telemetry: r.payload as Record<string, unknown>,
  }));
}
