import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { users } from "../../db/schema";
import type { Role } from "../../auth/principal";

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
 * Remembers subject → user per instance, so an authenticated request normally costs no
 * database round trip for identity. Entries expire so email and role changes land soon.
 */
export function createUserCache(now: () => number, ttlMs = 60_000, maxEntries = 50_000) {
  const entries = new Map<string, { user: KnownUser; role: Role; until: number }>();
  return {
    get(subject: string, role: Role): KnownUser | undefined {
      const hit = entries.get(subject);
      return hit && hit.until > now() && hit.role === role ? hit.user : undefined;
    },
    set(subject: string, role: Role, user: KnownUser): void {
      if (entries.size >= maxEntries) entries.clear();
      entries.set(subject, { user, role, until: now() + ttlMs });
    },
  };
}
export type UserCache = ReturnType<typeof createUserCache>;
