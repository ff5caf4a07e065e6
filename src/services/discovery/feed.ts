import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/port";
import { preparedRows } from "../../db/rows";
import { ApiError } from "../../errors";
import type { KeyValueStore } from "../../kv/port";
import type { Random } from "../../platform/ids";
import { EARTH_RADIUS_KM, ageOn, agesOnEpochDays, distanceKm, toCard, type ProfileCard } from "../profiles/card";
import { noBlockBetween } from "../safety/blocks";
import { GEO_CELL_OF_PROFILE, cellsCovering, positionBox } from "./geo-cells";
import { reciprocalScore, storedInterestOverlap } from "./score";

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

interface Viewer {
  userId: string;
  birthDate: string;
  gender: string;
  interestedIn: string[];
  ageMin: number;
  ageMax: number;
  maxDistanceKm: number;
  interests: string[];
  latitude: number | null;
  longitude: number | null;
  country: string | null;
  visibility: string;
}

interface Session {
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

interface SessionViewer {
  gender: string;
  interestedIn: string[];
  age: number;
  ageMin: number;
  ageMax: number;
  maxDistanceKm: number;
  country: string | null;
}

const SESSION_KEY = (id: string) => `discover:session:${id}`;

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

async function loadViewer(db: Db, userId: string): Promise<Viewer | null> {
  const [row] = await preparedRows<{
    user_id: string;
    birth_date: string;
    gender: string;
    interested_in: string[];
    age_min: number;
    age_max: number;
    max_distance_km: number;
    interests: string[];
    latitude: number | null;
    longitude: number | null;
    country: string | null;
    visibility: string;
  }>(
    db,
    sql`select user_id, birth_date::text as birth_date, gender, interested_in, age_min, age_max, max_distance_km, interests, latitude, longitude, country, visibility
        from profiles where user_id = ${userId}`,
  );
  if (!row) return null;
  return {
    userId: row.user_id,
    birthDate: row.birth_date,
    gender: row.gender,
    interestedIn: row.interested_in,
    ageMin: row.age_min,
    ageMax: row.age_max,
    maxDistanceKm: row.max_distance_km,
    interests: row.interests,
    latitude: row.latitude,
    longitude: row.longitude,
    country: row.country,
    visibility: row.visibility,
  };
}

/**
 * One candidate as the scan returns it (a JSON array, in this order). Numbers are integers where
 * they can be: Postgres prints a float with its shortest-round-trip algorithm and a date through
 * the calendar, each several times the work of an integer, and the scorer needs neither precision
 * (a micro-degree is 11 cm; activity decays over days).
 */
type CandidateRow = [
  userId: string,
  /** Days since 1970-01-01. */
  birthDay: number,
  ageMin: number,
  ageMax: number,
  maxDistanceKm: number,
  interests: string[],
  /** Micro-degrees, or null without a position. */
  latitudeE6: number | null,
  longitudeE6: number | null,
  /** Epoch seconds. */
  lastActiveS: number,
  createdS: number,
];

interface Ranked {
  userId: string;
  score: number;
}

/** Candidates that pass every filter both ways, scored and sorted, best first. */
async function rankCandidates(ctx: DiscoveryContext, viewer: Viewer, wishes: SessionViewer, options: DiscoveryOptions): Promise<Ranked[]> {
  const arms = viewer.interestedIn.length === 0 ? [] : candidateArms(viewer);
  if (arms.length === 0) return [];
  const today = utcDay(ctx.now);
  const me = viewer.userId;
  // The candidates come back as one JSON text, written out with concat_ws: up to a thousand rows
  // decoded field by field in the driver cost the API several times what one JSON.parse does,
  // and json_build_array looks up every argument's output function again on every row, which
  // made it half of the query's work. Ids are ours (no character JSON would escape) and the
  // interests go through array_to_json, which escapes them.
  const [result] = await preparedRows<{ candidates: string }>(
    ctx.db,
    sql`with candidates as (${sql.join(
      arms.map(
        (arm) => sql`select p.user_id, p.birth_date, p.age_min, p.age_max, p.max_distance_km, p.interests, p.latitude, p.longitude, p.last_active_at, p.created_at
            from profiles p
            where p.visibility = 'visible'
              and p.user_id <> ${me}
              and ${wishedBothWays(wishes, today)}
              and ${arm}`,
      ),
      sql` union all `,
    )}),
        chosen as (
          select p.* from candidates p
          where ${notExcluded(me, today, options.dailyImpressionCap, "set")}
          order by p.last_active_at desc
          limit ${options.candidateLimit}
        )
        select '[' || coalesce(string_agg('[' || concat_ws(',', '"' || p.user_id || '"', p.birth_date - date '1970-01-01', p.age_min, p.age_max, p.max_distance_km,
                 array_to_json(p.interests), coalesce(round(p.latitude * 1e6)::int8::text, 'null'), coalesce(round(p.longitude * 1e6)::int8::text, 'null'),
                 date_part('epoch', p.last_active_at)::int8, date_part('epoch', p.created_at)::int8) || ']', ','), '') || ']' as candidates
        from chosen p`,
  );
  const rows = JSON.parse(result?.candidates ?? "[]") as CandidateRow[];

  const viewerSide = { age: wishes.age, ageMin: viewer.ageMin, ageMax: viewer.ageMax, maxDistanceKm: viewer.maxDistanceKm, interests: viewer.interests };
  const viewerInterests = new Set(viewer.interests);
  const ageOf = agesOnEpochDays(ctx.now);
  const placed = viewer.latitude !== null && viewer.longitude !== null;
  const ranked = rows.map(([userId, birthDay, ageMin, ageMax, maxDistanceKm, interests, latitudeE6, longitudeE6, lastActiveS, createdS]) => {
    const km =
      placed && latitudeE6 !== null && longitudeE6 !== null
        ? distanceKm({ latitude: viewer.latitude as number, longitude: viewer.longitude as number }, { latitude: latitudeE6 / 1e6, longitude: longitudeE6 / 1e6 })
        : null;
    const { score } = reciprocalScore({
      viewer: viewerSide,
      candidate: { age: ageOf(birthDay), ageMin, ageMax, maxDistanceKm, interests },
      distanceKm: km,
      lastActiveMs: lastActiveS * 1000,
      createdMs: createdS * 1000,
      now: ctx.now,
      overlap: storedInterestOverlap(viewerInterests, interests),
    });
    return { userId, score };
  });
  ranked.sort((a, b) => b.score - a.score || (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0));
  return ranked.slice(0, options.snapshotSize);
}

/**
 * Everything that can change between pages of one session, and so is checked again on every
 * page: swipes by the viewer (any action), matches ever (unmatched too), blocks and reports
 * either way (a report hides the two people from each other even after its block is lifted), and
 * today's impression cap.
 *
 * `as`: a page checks its few rows one index lookup each ("lookup"). The candidate scan checks
 * hundreds of rows, so there each exclusion is read once into a hashed set ("set": NOT IN over a
 * subquery; every column read is NOT NULL, so NOT IN has no NULL trap here). The set of capped
 * profiles is the day's list in profile_impressions_capped, which the counting statement keeps.
 */
function notExcluded(me: string, today: string, cap: number, as: "lookup" | "set"): SQL {
  if (as === "set") {
    return sql`p.user_id not in (select s.target_id from swipes s where s.swiper_id = ${me})
          and p.user_id not in (select m.user_high from matches m where m.user_low = ${me} union all select m.user_low from matches m where m.user_high = ${me})
          and p.user_id not in (select b.blocked_id from blocks b where b.blocker_id = ${me} union all select b.blocker_id from blocks b where b.blocked_id = ${me})
          and p.user_id not in (select r.reported_id from reports r where r.reporter_id = ${me} union all select r.reporter_id from reports r where r.reported_id = ${me})
          and p.user_id not in (select c.user_id from profile_impressions_capped c where c.day = ${today}::date)`;
  }
  return sql`not exists (select 1 from swipes s where s.swiper_id = ${me} and s.target_id = p.user_id)
          and not exists (select 1 from matches m where (m.user_low = ${me} and m.user_high = p.user_id) or (m.user_low = p.user_id and m.user_high = ${me}))
          and ${noBlockBetween(me, sql`p.user_id`)}
          and not exists (select 1 from reports r where (r.reporter_id = ${me} and r.reported_id = p.user_id) or (r.reporter_id = p.user_id and r.reported_id = ${me}))
          and not exists (select 1 from profile_impressions i where i.user_id = p.user_id and i.day = ${today}::date and i.count >= ${cap}::int)`;
}

/**
 * Who is near enough, as separate arms of one UNION ALL, so that each arm can use its own index
 * (an OR of the two made the planner read every match from the heap):
 * - placed profiles within both people's maximum distance: the one-degree cells that cover a
 *   bounding box (./geo-cells.ts; read from profiles_discovery_placed_idx, cell by cell and within
 *   each cell only the wished birth dates), then the box itself, then the exact great-circle
 *   distance;
 * - profiles without a position, when they share the viewer's country.
 * A viewer without a position sees their country (placed or not); without a country either, nobody.
 */
function candidateArms(viewer: Viewer): SQL[] {
  const sameCountry = viewer.country === null ? null : sql`p.country = ${viewer.country}`;
  if (viewer.latitude === null || viewer.longitude === null) return sameCountry ? [sameCountry] : [];
  const lat = viewer.latitude;
  const lon = viewer.longitude;
  const km = viewer.maxDistanceKm;
  const box = positionBox(lat, lon, km);
  const [first, second] = box.lonRanges as [[number, number], [number, number] | undefined];
  const lonCondition =
    first[0] <= -180 && first[1] >= 180
      ? sql`true`
      : second
        ? sql`(p.longitude between ${first[0]}::float8 and ${first[1]}::float8 or p.longitude between ${second[0]}::float8 and ${second[1]}::float8)`
        : sql`p.longitude between ${first[0]}::float8 and ${first[1]}::float8`;
  const cells = cellsCovering(box);
  const cellCondition =
    "cells" in cells
      ? sql`${GEO_CELL_OF_PROFILE} = any(${sql.param(cells.cells)}::int[])`
      : sql`${GEO_CELL_OF_PROFILE} between ${cells.band[0]}::int and ${cells.band[1]}::int`;
  const placed = sql`${cellCondition} and p.latitude between ${box.latMin}::float8 and ${box.latMax}::float8 and ${lonCondition}
      and ${nearEnough(lat, lon, km)}`;
  return sameCountry ? [placed, sql`(p.latitude is null or p.longitude is null) and ${sameCountry}`] : [placed];
}

/** A placed profile `p` within both people's maximum distance of (lat, lon), great-circle. */
function nearEnough(lat: number, lon: number, km: number): SQL {
  return sql`p.latitude is not null and p.longitude is not null
      and 2 * ${EARTH_RADIUS_KM}::float8 * asin(least(1, sqrt(
      power(sin(radians(p.latitude - ${lat}::float8) / 2), 2)
      + cos(radians(${lat}::float8)) * cos(radians(p.latitude)) * power(sin(radians(p.longitude - ${lon}::float8) / 2), 2))))
      <= least(${km}::float8, p.max_distance_km::float8)`;
}

/**
 * What a later page checks again besides the exclusions: that the viewer is still visible, and
 * that each candidate, as their profile is now, still wants the viewer as the session saw them
 * (gender, age, distance from the session's position, or the same country without positions)
 * and is still someone the viewer asked for. The same filters as the candidate scan, one row at a
 * time: someone who changed their wishes or moved away mid-session drops out of it.
 */
function stillFits(session: Session, today: string): SQL {
  const v = session.v;
  if (!v) return viewerVisible(session);
  const sameCountry = sql`p.country = ${v.country}`;
  const near = session.p
    ? sql`((${nearEnough(session.p[0], session.p[1], v.maxDistanceKm)}) or ((p.latitude is null or p.longitude is null) and ${sameCountry}))`
    : sameCountry;
  return sql`${viewerVisible(session)} and ${wishedBothWays(v, today)} and ${near}`;
}

/**
 * Profile `p` is of a gender and an age the viewer asked for, and wants the viewer's gender and
 * age: the candidate scan's filters (whose birth dates and genders its index reads) and every
 * later page's re-check.
 */
function wishedBothWays(v: SessionViewer, today: string): SQL {
  return sql`p.gender = any(${sql.param(v.interestedIn)}::text[])
              and ${v.gender} = any(p.interested_in)
              and p.birth_date > ${yearsBefore(today, v.ageMax + 1)}::date
              and p.birth_date <= ${yearsBefore(today, v.ageMin)}::date
              and p.age_min <= ${v.age}::int and p.age_max >= ${v.age}::int`;
}

/** A viewer who hid their profile mid-session gets no more cards from it. */
function viewerVisible(session: Session): SQL {
  return sql`exists (select 1 from profiles viewer where viewer.user_id = ${session.u} and viewer.visibility = 'visible')`;
}

/** One card as the page query writes it (a JSON array, in this order). */
type PageRow = [
  /** 1-based position in the window. */
  ord: number,
  text: [userId: string, displayName: string, birthDate: string, gender: string, tagline: string | null, bio: string | null, city: string | null, country: string | null],
  interests: string[],
  photos: string[],
  languages: string[],
  /** Micro-degrees, or null without a position. */
  latitudeE6: number | null,
  longitudeE6: number | null,
  lastActiveMs: number,
];

/**
 * Reads the session from `offset` on, skipping ids that were excluded since the snapshot, and
 * counts one impression for each card this viewer had not been shown yet today. Read and count
 * are one statement: the window's ids keep their session order (`ord`), the page is the first
 * `need` of them that pass, (day, profile, viewer) rows go in first, and only the new ones bump a
 * count. Both inserts take their rows in id order, so concurrent pages lock shared rows in the
 * same order (no deadlocks between two feeds showing the same people). A count that reaches the cap
 * lists its profile in profile_impressions_capped for the candidate scans of the rest of the day.
 *
 * The statement commits asynchronously (`synchronous_commit` off for its own transaction only, via
 * set_config(..., true)): under load, waiting for the WAL flush of the counter was a large share
 * of the database time of a page. A crash can lose at most the last fraction of a second of
 * counts, which the soft cap tolerates; nothing else in that transaction needs durability.
 */
async function servePage(
  ctx: DiscoveryContext,
  session: Session,
  offset: number,
  limit: number,
  options: DiscoveryOptions,
): Promise<{ cards: ProfileCard[]; next: number }> {
  const cards: ProfileCard[] = [];
  const today = utcDay(ctx.now);
  const from = session.p ? { latitude: session.p[0], longitude: session.p[1] } : { latitude: null, longitude: null };
  let position = offset;
  while (cards.length < limit && position < session.ids.length) {
    const need = limit - cards.length;
    // A window a bit larger than the page, so a few exclusions rarely cost a second query.
    const window = session.ids.slice(position, position + limit + Math.max(5, limit >> 1));
    // The page comes back as one JSON text, like the candidates: twenty rows decoded column by
    // column (three text arrays each) cost the API more than one JSON.parse, and json_agg over
    // whole rows looked up each column's output function again on every row, a seventh of the
    // statement. array_to_json escapes the text; it looks the element type up once per array.
    const [result] = await preparedRows<{ rows: string; viewer_visible: boolean }>(
      ctx.db,
      sql`with w (user_id, ord) as (select * from unnest(${sql.param(window)}::text[]) with ordinality),
          page as (
            select w.ord, p.user_id, p.display_name, p.birth_date, p.gender, p.tagline, p.bio, p.interests, p.photos, p.languages, p.city, p.country,
              p.latitude, p.longitude, p.last_active_at
            from w join profiles p on p.user_id = w.user_id
            where p.visibility = 'visible'
              and ${notExcluded(session.u, today, options.dailyImpressionCap, "lookup")}
              and ${stillFits(session, today)}
            order by w.ord
            limit ${need}::int
          ),
          async_commit as (select set_config('synchronous_commit', 'off', true) as setting),
          first_sight as (
            insert into profile_impression_viewers (day, user_id, viewer_id)
            select ${today}::date, page.user_id, ${session.u} from page, async_commit order by page.user_id
            on conflict do nothing
            returning user_id
          ),
          counted as (
            insert into profile_impressions (user_id, day, count)
            select first_sight.user_id, ${today}::date, 1 from first_sight order by first_sight.user_id
            on conflict (user_id, day) do update set count = profile_impressions.count + 1
            returning user_id, count
          ),
          capped as (
            insert into profile_impressions_capped (day, user_id)
            select ${today}::date, counted.user_id from counted where counted.count >= ${options.dailyImpressionCap}::int
            on conflict do nothing
          )
          select '[' || coalesce(string_agg('[' || concat_ws(',', p.ord,
                   array_to_json(array[p.user_id, p.display_name, p.birth_date::text, p.gender, p.tagline, p.bio, p.city, p.country]),
                   array_to_json(p.interests), array_to_json(p.photos), array_to_json(p.languages),
                   coalesce(round(p.latitude * 1e6)::int8::text, 'null'), coalesce(round(p.longitude * 1e6)::int8::text, 'null'),
                   floor(date_part('epoch', p.last_active_at) * 1000)::int8) || ']', ',' order by p.ord), '') || ']' as rows,
            ${viewerVisible(session)} as viewer_visible
          from page p`,
    );
    // The rest of the session is not served to a viewer who is hidden now.
    if (result && !result.viewer_visible) return { cards, next: session.ids.length };
    const rows = JSON.parse(result?.rows ?? "[]") as PageRow[];
    for (const [ord, [userId, displayName, birthDate, gender, tagline, bio, city, country], interests, photos, languages, latitudeE6, longitudeE6, lastActiveMs] of rows) {
      cards.push(toCard(
        {
          userId,
          displayName,
          birthDate,
          gender,
          tagline,
          bio,
          interests,
          photos,
          languages,
          city,
          country,
          latitude: latitudeE6 === null ? null : latitudeE6 / 1e6,
          longitude: longitudeE6 === null ? null : longitudeE6 / 1e6,
          lastActiveAt: new Date(lastActiveMs),
        },
        from,
        ctx.now,
      ));
    }
    // A full page ends right after its last card; otherwise the whole window was used up.
    const last = rows[rows.length - 1];
    position += rows.length === need && last ? last[0] : window.length;
  }
  return { cards, next: position };
}

export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** The same calendar day `years` earlier (29 February becomes the 28th), as YYYY-MM-DD. */
export function yearsBefore(day: string, years: number): string {
  const [y, m, d] = day.split("-").map(Number) as [number, number, number];
  const year = y - years;
  const lastDay = new Date(Date.UTC(year, m, 0)).getUTCDate();
  const pad = (n: number, w: number) => String(n).padStart(w, "0");
  return `${pad(year, 4)}-${pad(m, 2)}-${pad(Math.min(d, lastDay), 2)}`;
}

function newSessionId(random: Random): string {
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

function parseSession(text: string): Session | null {
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
