import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { users } from "../../db/schema";
import type { Role } from "../../auth/principal";
import { createSwrCache, type Background, type CacheTuning } from "../../platform/swr-cache";

export interface KnownUser {
  id: string;
  email: string | null;
}

/**
 * Finds or creates the user behind a token's `sub` in one statement; concurrent first requests
 * of the same new user meet at the unique index and get the same row.
 */
export async function ensureUser(db: Db, input: { subject: string; email: string | null; role: Role; newId: string; now: Date }): Promise<KnownUser> {
  const [row] = await db
    .insert(users)
    .values({ id: input.newId, subject: input.subject, email: input.email, role: input.role, lastSeenAt: input.now })
    .onConflictDoUpdate({
      target: users.subject,
      set: { email: sql`coalesce(excluded.email, ${users.email})`, role: input.role, lastSeenAt: input.now },
    })
    .returning({ id: users.id, email: users.email });
  if (!row) throw new Error("user upsert returned no row");
  return row;
}

/**
 * Fresh for 10 minutes (less by up to a fifth); see createSwrCache. Everything the entry answers
 * is fixed by its key, so the re-run only moves the last-seen time: that time is as fine as this.
 */
export const IDENTITY_FRESH_MS = 600_000;
/** Past fresh, an identity is still answered for this long while the upsert runs again behind it. */
export const IDENTITY_STALE_MS = 300_000;

/**
 * Remembers subject → user per instance, so an authenticated request of a known caller costs no
 * database round trip for identity. The token's role and email are part of the key, so a changed
 * role or email is written (and answered) at once; the last-seen time lands with the background
 * re-run of the upsert, within IDENTITY_FRESH_MS of activity.
 */
export function createUserCache(options: CacheTuning) {
  const cache = createSwrCache<KnownUser>({ freshMs: IDENTITY_FRESH_MS, staleMs: IDENTITY_STALE_MS, maxEntries: 50_000, ...options });
  return {
    resolve: (token: { subject: string; email: string | null }, role: Role, load: () => Promise<KnownUser>, background: Background): Promise<KnownUser> =>
      // JSON keeps the parts apart whatever characters a subject or an email holds.
      cache.get(JSON.stringify([role, token.email, token.subject]), load, background),
  };
}
export type UserCache = ReturnType<typeof createUserCache>;
