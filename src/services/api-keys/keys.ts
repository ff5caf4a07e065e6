import { and, desc, eq, isNull } from "drizzle-orm";
import type { Db } from "../../db/port";
import { apiKeys, users } from "../../db/schema";
import { ApiError } from "../../errors";
import { assertAdmin, type Principal } from "../../auth/principal";
import type { IdGenerator, Random } from "../../platform/ids";
import { sha256Hex, toHex } from "../../platform/hash";
import { recordAudit } from "../audit/log";

/** 64 hex characters; keys are issued in lower case, and a client that upper-cases one sends the same key. */
export const KEY_PATTERN = /^[0-9a-fA-F]{64}$/;
/** Rotation is advised after this age; older keys keep working with a Warning header. */
export const ROTATE_AFTER_MS = 90 * 24 * 3_600_000;
const PREFIX_LENGTH = 8;
const DAY_MS = 24 * 3_600_000;

export interface KeyServiceDeps {
  db: Db;
  ids: IdGenerator;
  random: Random;
  now: number;
  /** The request a write serves, for its audit entry. */
  requestId: string;
}

export interface CreatedKey {
  keyId: string;
  key: string;
  prefix: string;
  name: string | null;
  createdAt: string;
  expiresAt: string | null;
}

/**
 * Keys are managed by signed-in admins only. A key acts as an admin everywhere else, so a key
 * allowed to issue keys would outlive its own expiry or revocation through the ones it issued.
 */
function assertSignedInAdmin(actor: Principal): void {
  assertAdmin(actor);
  if (actor.credential === "api_key") throw new ApiError("forbidden", "API keys are managed by a signed-in admin, not with an API key");
}

/** Postgres keeps timestamps up to the year 294276, but ISO text and clients stop at 9999. */
const LAST_EXPIRY_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

export async function createApiKey(d: KeyServiceDeps, actor: Principal, input: { name?: string; expiresAt?: string }): Promise<CreatedKey> {
  assertSignedInAdmin(actor);
  const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
  if (expiresAt && expiresAt.getTime() <= d.now) {
    throw new ApiError("invalid_input", "expiresAt must be in the future", { details: [{ path: "expiresAt", message: "must be in the future" }] });
  }
  // An offset can carry 9999-12-31T23:59:59-23:59 into the year 10000.
  if (expiresAt && expiresAt.getTime() > LAST_EXPIRY_MS) {
    throw new ApiError("invalid_input", "expiresAt must be before the year 10000 (UTC)", { details: [{ path: "expiresAt", message: "at most 9999-12-31T23:59:59.999Z" }] });
  }
  const key = toHex(d.random.bytes(32));
  const createdAt = new Date(d.now);
  const id = d.ids.next("key");
  const [row] = await d.db.transaction(async (tx) => {
    const inserted = await tx
      .insert(apiKeys)
      .values({ id, keyHash: await sha256Hex(key), prefix: key.slice(0, PREFIX_LENGTH), name: input.name ?? null, createdBy: actor.userId, createdAt, expiresAt })
      .returning();
    // The key itself never enters the log; its id and prefix identify it.
    await recordAudit(tx, d.ids, { actor, requestId: d.requestId }, createdAt, {
      action: "api_key.create",
      targetType: "api_key",
      targetId: id,
      details: { prefix: key.slice(0, PREFIX_LENGTH), name: input.name ?? null, expiresAt: expiresAt?.toISOString() ?? null },
    });
    return inserted;
  });
  if (!row) throw new Error("api key insert returned no row");
  return { keyId: row.id, key, prefix: row.prefix, name: row.name, createdAt: createdAt.toISOString(), expiresAt: expiresAt?.toISOString() ?? null };
}

export interface ListedKey {
  keyId: string;
  prefix: string;
  name: string | null;
  createdBy: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  ageDays: number;
  rotationAdvised: boolean;
}

/** Keys belong to the platform, not to one admin: every admin sees and may revoke all of them. */
export async function listApiKeys(d: KeyServiceDeps, actor: Principal): Promise<ListedKey[]> {
  assertSignedInAdmin(actor);
  const rows = await d.db.select().from(apiKeys).where(isNull(apiKeys.revokedAt)).orderBy(desc(apiKeys.createdAt));
  return rows.map((r) => ({
    keyId: r.id,
    prefix: r.prefix,
    name: r.name,
    createdBy: r.createdBy,
    createdAt: r.createdAt.toISOString(),
    expiresAt: r.expiresAt?.toISOString() ?? null,
    lastUsedAt: r.lastUsedAt?.toISOString() ?? null,
    ageDays: Math.floor((d.now - r.createdAt.getTime()) / DAY_MS),
    rotationAdvised: d.now - r.createdAt.getTime() > ROTATE_AFTER_MS,
  }));
}

export async function revokeApiKey(d: KeyServiceDeps, actor: Principal, keyId: string): Promise<void> {
  assertSignedInAdmin(actor);
  await d.db.transaction(async (tx) => {
    const revoked = await tx
      .update(apiKeys)
      .set({ revokedAt: new Date(d.now) })
      .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)))
      .returning({ id: apiKeys.id, prefix: apiKeys.prefix });
    if (revoked.length === 0) throw new ApiError("not_found", "no such API key");
    await recordAudit(tx, d.ids, { actor, requestId: d.requestId }, d.now, { action: "api_key.revoke", targetType: "api_key", targetId: keyId, details: { prefix: revoked[0]!.prefix } });
  });
}

export type KeyCheck =
  | { ok: true; keyId: string; userId: string; email: string | null; createdAt: number; expiresAt: number | null; deletedAt: number | null }
  | { ok: false; reason: "invalid" | "expired" };

/**
 * Looks a presented key up by its hash. The secret itself is never compared, so response time
 * does not depend on how much of a guess was right. A key whose creator lost the admin role
 * stops working: the demotion revoked it for good (migration api_keys_revoked_on_demotion), and
 * the role is checked here too.
 */
export async function checkApiKey(db: Db, key: string, now: number): Promise<KeyCheck> {
  const [row] = await db
    .select({ id: apiKeys.id, createdBy: apiKeys.createdBy, createdAt: apiKeys.createdAt, expiresAt: apiKeys.expiresAt, revokedAt: apiKeys.revokedAt, email: users.email, role: users.role, deletedAt: users.deletedAt })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.createdBy))
    .where(eq(apiKeys.keyHash, await sha256Hex(key.toLowerCase())))
    .limit(1);
  if (!row || row.revokedAt !== null || row.role !== "admin") return { ok: false, reason: "invalid" };
  if (row.expiresAt !== null && row.expiresAt.getTime() <= now) return { ok: false, reason: "expired" };
  return { ok: true, keyId: row.id, userId: row.createdBy, email: row.email, createdAt: row.createdAt.getTime(), expiresAt: row.expiresAt?.getTime() ?? null, deletedAt: row.deletedAt?.getTime() ?? null };
}

/**
 * Whether a key that was valid when a request began still is: not revoked, not expired, and its
 * creator still an admin with an account that is not deleted (the rules of checkApiKey). For what outlives the request, an event
 * stream, which checks again now and then.
 */
export async function apiKeyStillValid(db: Db, keyId: string, now: number): Promise<boolean> {
  const [row] = await db
    .select({ expiresAt: apiKeys.expiresAt, revokedAt: apiKeys.revokedAt, role: users.role, deletedAt: users.deletedAt })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.createdBy))
    .where(eq(apiKeys.id, keyId))
    .limit(1);
  return row !== undefined && row.revokedAt === null && row.deletedAt === null && row.role === "admin" && (row.expiresAt === null || row.expiresAt.getTime() > now);
}

/** Records last use at most once a minute per key and instance: no write on every request. */
export function createLastUsedRecorder(intervalMs = 60_000) {
  const lastWrite = new Map<string, number>();
  return {
    due(keyId: string, now: number): boolean {
      const last = lastWrite.get(keyId) ?? 0;
      if (now - last < intervalMs) return false;
      if (lastWrite.size > 10_000) lastWrite.clear();
      lastWrite.set(keyId, now);
      return true;
    },
    async write(db: Db, keyId: string, now: number): Promise<void> {
      await db.update(apiKeys).set({ lastUsedAt: new Date(now) }).where(eq(apiKeys.id, keyId));
    },
  };
}
export type LastUsedRecorder = ReturnType<typeof createLastUsedRecorder>;
