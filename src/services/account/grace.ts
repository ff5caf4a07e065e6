/** How long a deleted account can be restored; the hourly erasure removes it after that. */
export const GRACE_DAYS = 30;
export const GRACE_MS = GRACE_DAYS * 86_400_000;
