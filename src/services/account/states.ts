import { IDENTITY_FRESH_MS, IDENTITY_STALE_MS } from "../users/ensure-user";

/** How long a remembered identity can be answered without the database: fresh, then stale. */
const OVERRIDE_MS = IDENTITY_FRESH_MS + IDENTITY_STALE_MS;

/**
 * Deletions and restores this instance made itself. The identity cache answers a token from
 * memory for up to OVERRIDE_MS, so without this a member's next request on the same instance
 * could still be served as before their deletion (or refused after their restore). Past
 * OVERRIDE_MS every remembered identity has been read again from the database, which then knows.
 */
export function createAccountStates(maxEntries = 10_000) {
  const changes = new Map<string, { deletedAt: number | null; at: number }>();
  return {
    record(userId: string, deletedAt: number | null, now: number): void {
      if (changes.size >= maxEntries) changes.clear();
      changes.set(userId, { deletedAt, at: now });
    },
    /** The account's deletion time as this instance last made it, else as remembered. */
    deletedAt(userId: string, remembered: number | null, now: number): number | null {
      const change = changes.get(userId);
      if (!change) return remembered;
      if (now - change.at > OVERRIDE_MS) {
        changes.delete(userId);
        return remembered;
      }
      return change.deletedAt;
    },
  };
}
export type AccountStates = ReturnType<typeof createAccountStates>;
