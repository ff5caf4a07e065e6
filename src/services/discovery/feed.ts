import { ApiError } from "../../errors";
import type { Db } from "../../db/port";
import type { KeyValueStore } from "../../kv/port";
import type { Random } from "../../platform/ids";
import { ageOn, type ProfileCard } from "../profiles/card";
import { loadViewer, rankCandidates } from "./candidates";
import { servePage } from "./page";
import { SESSION_KEY, decodeCursor, encodeCursor, newSessionId, parseSession, type Session, type SessionViewer } from "./session";

export { utcDay, yearsBefore } from "./filters";
export { decodeCursor, encodeCursor } from "./session";

/**
 * The discovery feed: cursor-paged swipe cards for the caller.
 *
 * 1. Filtering happens in SQL and holds on BOTH sides: gender wishes, age ranges, distance
 *    (≤ both maxima; a bounding box on latitude/longitude, then an exact haversine), and
 *    visibility. Gone are the caller, anyone the caller swiped (any action), anyone ever matched
 *    with the caller (unmatched included), blocks either way (a report also blocks), and
 *    profiles over today's impression cap. When either side has no position, both must share
 *    a country instead (a caller with neither position nor country sees nobody).
 * 2. At most `candidateLimit` rows (most recently active first) are scored in JS
 *    (./score.ts, reciprocal) and the best `snapshotSize` ids become a feed session in the
 *    key-value store (TTL 30 min, random id). The cursor is session id + offset, so a card never
 *    repeats across the pages of one session; every page re-checks its ids against swipes,
 *    matches, blocks, visibility and the cap, so anyone swiped or blocked since drops out.
 *    The session also keeps the viewer's position at its start: later pages measure distances
 *    from there and read no profile of the viewer's.
 * 3. A served card counts one impression for its profile the first time that viewer is shown it
 *    that day, in the same statement that reads the page (a data-modifying CTE: one round trip
 *    and one commit per page). So the cap is on distinct viewers: reopening one's feed again and
 *    again spends nobody's cap. The cap is soft: two feeds racing on the same profile can push it
 *    a little over.
 *
 * Here: the first page and the cursor. The viewer and the candidate scan are in ./candidates.ts,
 * a page and its impressions in ./page.ts, the filters as SQL in ./filters.ts, the stored session
 * and the cursor's format in ./session.ts.
 */
export interface DiscoveryOptions {
  /** Cards one profile may appear on per UTC day, across everyone's feeds. */
  dailyImpressionCap: number;
  /** Rows the SQL hands to the scorer. */
  candidateLimit: number;
  /** Ranked ids kept per feed session. */
  snapshotSize: number;
  sessionTtlMs: number;
}

export const DISCOVERY_DEFAULTS: DiscoveryOptions = {
  dailyImpressionCap: 200,
  candidateLimit: 1000,
  snapshotSize: 500,
  sessionTtlMs: 30 * 60_000,
};

export interface DiscoveryContext {
  db: Db;
  kv: KeyValueStore;
  random: Random;
  now: number;
  options?: Partial<DiscoveryOptions>;
}

export interface DiscoverPage {
  profiles: ProfileCard[];
  nextCursor: string | null;
}


export async function discover(ctx: DiscoveryContext, userId: string, page: { limit: number; cursor?: string }): Promise<DiscoverPage> {
  const options = { ...DISCOVERY_DEFAULTS, ...ctx.options };
  if (page.cursor !== undefined) return nextPage(ctx, userId, decodeCursor(page.cursor), page.limit, options);

  const viewer = await loadViewer(ctx.db, userId);
  if (!viewer) throw new ApiError("not_found", "create your profile first");
  const position: Session["p"] = viewer.latitude !== null && viewer.longitude !== null ? [viewer.latitude, viewer.longitude] : null;
  const v: SessionViewer = {
    gender: viewer.gender,
    interestedIn: viewer.interestedIn,
    age: ageOn(viewer.birthDate, ctx.now),
    ageMin: viewer.ageMin,
    ageMax: viewer.ageMax,
    maxDistanceKm: viewer.maxDistanceKm,
    country: viewer.country,
  };
  const session: Session = { u: userId, ids: [], p: position, v };
  if (viewer.visibility === "visible") session.ids = (await rankCandidates(ctx, viewer, v, options)).map((r) => r.userId);
  const sessionId = newSessionId(ctx.random);
  // Stored while the first page is read (one wait instead of two), and only when there can be
  // a second page: a feed that fits on one page costs no write.
  const [{ cards, next }] = await Promise.all([
    servePage(ctx, session, 0, page.limit, options),
    session.ids.length > page.limit ? ctx.kv.set(SESSION_KEY(sessionId), JSON.stringify(session), { ttlMs: options.sessionTtlMs }) : undefined,
  ]);
  return { profiles: cards, nextCursor: next < session.ids.length ? encodeCursor(sessionId, next) : null };
}

/** A later page: the stored session alone says whose feed it is and where its viewer stood. */
async function nextPage(
  ctx: DiscoveryContext,
  userId: string,
  cursor: { sessionId: string; offset: number },
  limit: number,
  options: DiscoveryOptions,
): Promise<DiscoverPage> {
  const stored = await ctx.kv.get(SESSION_KEY(cursor.sessionId));
  const session = stored === null ? null : parseSession(stored);
  if (!session || session.u !== userId || cursor.offset > session.ids.length) {
    throw new ApiError("invalid_input", "unknown or expired cursor", {
      details: [{ path: "cursor", message: "feed sessions last 30 minutes; start again without a cursor" }],
    });
  }
  const { cards, next } = await servePage(ctx, session, cursor.offset, limit, options);
  return { profiles: cards, nextCursor: next < session.ids.length ? encodeCursor(cursor.sessionId, next) : null };
}

