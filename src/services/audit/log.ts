import { and, desc, eq, lt, type SQL } from "drizzle-orm";
import { assertAdmin, type Principal } from "../../auth/principal";
import type { Db } from "../../db/port";
import { adminAuditLog } from "../../db/tables/admin";
import type { IdGenerator } from "../../platform/ids";
import type { Tx } from "../wallet/ledger";

/** What an audited write knows about the request it serves: the caller and the request id. */
export interface AuditStamp {
  actor: Principal;
  requestId: string;
}

export interface AuditEntry {
  /** `<area>.<verb>`, e.g. `kb.replace`; documented in docs/api/admin.md. */
  action: string;
  targetType: string;
  targetId: string;
  /** What changed, without secrets. */
  details?: Record<string, unknown>;
}

/**
 * Records one admin write. Call it with the transaction of the write itself, so the entry and the
 * effect commit or roll back together; any service can call it with the stamp its route built.
 */
export async function recordAudit(db: Db | Tx, ids: IdGenerator, stamp: AuditStamp, at: number | Date, entry: AuditEntry): Promise<void> {
  await db.insert(adminAuditLog).values({
    id: ids.next("aud"),
    actorUserId: stamp.actor.userId,
    credential: stamp.actor.credential,
    apiKeyId: stamp.actor.keyId ?? null,
    action: entry.action,
    targetType: entry.targetType,
    targetId: entry.targetId,
    requestId: stamp.requestId,
    details: entry.details ?? {},
    createdAt: at instanceof Date ? at : new Date(at),
  });
}

export interface AuditRecord {
  auditId: string;
  actorUserId: string;
  credential: string;
  apiKeyId: string | null;
  action: string;
  targetType: string;
  targetId: string;
  requestId: string;
  details: Record<string, unknown>;
  createdAt: string;
}

export interface AuditQuery {
  limit: number;
  /** The `nextCursor` of the previous page: entries older than it. */
  cursor?: string;
  action?: string;
  actorUserId?: string;
  targetType?: string;
  targetId?: string;
}

/** Newest first, a page at a time; ids grow with time, so the cursor is the last id seen. */
export async function listAudit(db: Db, actor: Principal, q: AuditQuery): Promise<{ entries: AuditRecord[]; nextCursor: string | null }> {
  assertAdmin(actor);
  const filters: SQL[] = [];
  if (q.cursor !== undefined) filters.push(lt(adminAuditLog.id, q.cursor));
  if (q.action !== undefined) filters.push(eq(adminAuditLog.action, q.action));
  if (q.actorUserId !== undefined) filters.push(eq(adminAuditLog.actorUserId, q.actorUserId));
  if (q.targetType !== undefined) filters.push(eq(adminAuditLog.targetType, q.targetType));
  if (q.targetId !== undefined) filters.push(eq(adminAuditLog.targetId, q.targetId));
  const rows = await db
    .select()
    .from(adminAuditLog)
    .where(filters.length ? and(...filters) : undefined)
    .orderBy(desc(adminAuditLog.id))
    .limit(q.limit + 1);
  const entries = rows.slice(0, q.limit).map((r) => ({
    auditId: r.id,
    actorUserId: r.actorUserId,
    credential: r.credential,
    apiKeyId: r.apiKeyId,
    action: r.action,
    targetType: r.targetType,
    targetId: r.targetId,
    requestId: r.requestId,
    details: r.details as Record<string, unknown>,
    createdAt: r.createdAt.toISOString(),
  }));
  return { entries, nextCursor: rows.length > q.limit ? (entries[entries.length - 1]?.auditId ?? null) : null };
}
