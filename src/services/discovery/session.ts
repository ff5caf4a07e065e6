import type { Random } from "../../platform/ids";
import { ApiError } from "../../errors";

/** A feed session as the key-value store keeps it (JSON, short keys). */
export interface Session {
  /** Owner: a cursor only works for the person whose feed it is. */
  u: string;
  ids: string[];
  /**
   * The viewer's position when the session was built, [latitude, longitude] or null: later pages
   * measure their cards' distances from where the candidates were chosen, and need no second
   * read of the viewer's profile.
   */
  p: [number, number] | null;
  /**
   * The viewer's side of the filters when the session was built, which later pages hold each
   * candidate's current wishes against (absent in sessions stored before it was kept).
   */
  v?: SessionViewer;
}

export interface SessionViewer {
  gender: string;
  interestedIn: string[];
  age: number;
  ageMin: number;
  ageMax: number;
  maxDistanceKm: number;
  country: string | null;
}

export const SESSION_KEY = (id: string) => `discover:session:${id}`;

export function newSessionId(random: Random): string {
  return base64url(random.bytes(16));
}

function base64url(bytes: Uint8Array): string {
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Opaque to clients: `v1.<session id>.<offset>`, base64url. */
export function encodeCursor(sessionId: string, offset: number): string {
  return btoa(`v1.${sessionId}.${offset}`).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function decodeCursor(cursor: string): { sessionId: string; offset: number } {
  let text = "";
  try {
    text = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    // fall through to the error below
  }
  const m = /^v1\.([A-Za-z0-9_-]{22})\.(\d{1,6})$/.exec(text);
  if (!m) throw new ApiError("invalid_input", "malformed cursor", { details: [{ path: "cursor", message: "use the nextCursor of a previous page" }] });
  return { sessionId: m[1] as string, offset: Number(m[2]) };
}

export function parseSession(text: string): Session | null {
  try {
    const value = JSON.parse(text) as Session;
    if (typeof value.u !== "string" || !Array.isArray(value.ids)) return null;
    // Sessions stored before positions were kept: their cards show no distance.
    if (!Array.isArray(value.p)) value.p = null;
    return value;
  } catch {
    return null;
  }
}
