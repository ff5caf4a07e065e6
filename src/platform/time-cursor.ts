import { ApiError } from "../errors";

/**
 * An opaque keyset cursor for lists ordered by (time, id), newest first: inside it names the last
 * item of the page. base64url of `<epoch ms>.<id>`.
 */
export function encodeTimeCursor(at: Date, id: string): string {
  return btoa(`${at.getTime()}.${id}`).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

// Postgres takes years up to 9999 in the ISO form the cursor becomes; a later time is no item's.
const MAX_CURSOR_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** The time and id a cursor names; 400 `invalid_input` on `cursor` for anything else. */
export function decodeTimeCursor(cursor: string): { at: Date; id: string } {
  let text = "";
  try {
    text = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    // falls through to the check below
  }
  const m = /^(\d{1,15})\.([A-Za-z0-9_]{1,64})$/.exec(text);
  if (!m || Number(m[1]) > MAX_CURSOR_MS) throw new ApiError("invalid_input", "malformed cursor", { details: [{ path: "cursor", message: "use the nextCursor of a previous page" }] });
  return { at: new Date(Number(m[1])), id: m[2] as string };
}
