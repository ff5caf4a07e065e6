import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { users } from "../../db/schema";
import type { Role } from "../../auth/principal";
import { createSwrCache, type Background, type CacheTuning } from "../../platform/swr-cache";

export interface KnownUser {
  id: string;
  email: string | null;
  /** The stored role: the one the newest token has set, whatever the presented token says. */
  role: Role;
  /** When the member deleted their account (ms since the epoch), or null. */
  deletedAt: number | null;
}

/**
 * Finds or creates the user behind a token's `sub` in one statement; concurrent first requests
 * of the same new user meet at the unique index and get the same row.
 *
 * The role follows the newest token, ordered by `iat`: a token issued before the one that last
 * set the role never changes it, so an admin token minted before a demotion cannot undo it. Two
 * tokens issued in the same second that disagree leave the lower role (a demotion wins the tie).
 * Lowering the role revokes the user's API keys for good (a trigger in the database).
 */
export async function ensureUser(
  db: Db,
  input: { subject: string; email: string | null; role: Role; issuedAt: Date; newId: string; now: Date },
): Promise<KnownUser> {
  const newer = sql`(${users.roleTokenIssuedAt} is null or excluded.role_token_issued_at > ${users.roleTokenIssuedAt}
    or (excluded.role_token_issued_at = ${users.roleTokenIssuedAt} and excluded.role = 'user'))`;
  const [row] = await db
    .insert(users)
    .values({ id: input.newId, subject: input.subject, email: input.email, role: input.role, roleTokenIssuedAt: input.issuedAt, lastSeenAt: input.now })
    .onConflictDoUpdate({
      target: users.subject,
      set: {
        email: sql`coalesce(excluded.email, ${users.email})`,
        role: sql`case when ${newer} then excluded.role else ${users.role} end`,
        roleTokenIssuedAt: sql`greatest(${users.roleTokenIssuedAt}, excluded.role_token_issued_at)`,
        lastSeenAt: input.now,
      },
    })
    .returning({ id: users.id, email: users.email, role: users.role, deletedAt: users.deletedAt });
  if (!row) throw new Error("user upsert returned no row");
  return { id: row.id, email: row.email, role: row.role === "admin" ? "admin" : "user", deletedAt: row.deletedAt?.getTime() ?? null };
}

/**
 * Fresh for 10 minutes (less by up to a fifth); see createSwrCache. Everything the entry answers
 * is fixed by its key, so the re-run only moves the last-seen time: that time is as fine as this.
 */
export const IDENTITY_FRESH_MS = 600_000;
/** How long a deleted account's identity is remembered (see createUserCache). */
export const DELETED_FRESH_MS = 5_000;
/** Past fresh, an identity is still answered for this long while the upsert runs again behind it. */
export const IDENTITY_STALE_MS = 300_000;

/**
 * Remembers token → user per instance, so an authenticated request of a known member costs no
 * database round trip for identity. The token's role, email and `iat` are part of the key, so a
 * new token is written (and answered) at once; the last-seen time lands with the background
 * re-run of the upsert, within IDENTITY_FRESH_MS of activity.
 *
 * An admin is never answered from memory: another instance may have seen a newer token that
 * lowered the role, and a remembered "admin" would outlive that demotion here. A remembered
 * "user" that another instance promoted only errs on the safe side until the entry expires.
 */
export function createUserCache(options: CacheTuning) {
  const cache = createSwrCache<KnownUser>({
    freshMs: IDENTITY_FRESH_MS,
    staleMs: IDENTITY_STALE_MS,
    maxEntries: 50_000,
    ...options,
    // A deleted account is remembered only briefly: a restore on another instance lets the member
    // back within DELETED_FRESH_MS, and a deleted member's refused requests (which no quota
    // counts) do not each cost a database write.
    expiresAt: (user) => (user.role === "admin" ? 0 : user.deletedAt !== null ? options.now() + DELETED_FRESH_MS : null),
  });
  return {
    resolve: (token: { subject: string; email: string | null; issuedAt: number }, role: Role, load: () => Promise<KnownUser>, background: Background): Promise<KnownUser> =>
      // JSON keeps the parts apart whatever characters a subject or an email holds.
      cache.get(JSON.stringify([role, token.email, token.subject, token.issuedAt]), load, background),
  };
}
export type UserCache = ReturnType<typeof createUserCache>;
