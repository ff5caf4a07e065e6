import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/port";
import { preparedRows } from "../../db/rows";
import { agesOn, distanceKm } from "../profiles/card";
import type { DiscoveryContext, DiscoveryOptions } from "./feed";
import { excludedIds, nearEnough, utcDay, wishedBothWays, yearsBefore } from "./filters";
import { GEO_CELL_OF_PROFILE, cellsCovering, positionBox } from "./geo-cells";
import { reciprocalScore, storedInterestOverlap } from "./score";
import type { SessionViewer } from "./session";

export interface Viewer {
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

export async function loadViewer(db: Db, userId: string): Promise<Viewer | null> {
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

/** One candidate as the scan returns it: plain columns, as the driver decodes them. */
interface CandidateRow extends Record<string, unknown> {
  user_id: string;
  birth_date: string;
  age_min: number;
  age_max: number;
  max_distance_km: number;
  interests: string[];
  latitude: number | null;
  longitude: number | null;
  /** Epoch milliseconds (the driver hands timestamps over as text). */
  last_active_ms: number;
  created_ms: number;
}

const HOUR_MS = 3_600_000;

/**
 * The UTC hour of a profile's last activity, exactly as profiles_discovery_placed_idx and
 * profiles_discovery_unplaced_idx key it, so that a bound on it bounds the index read.
 */
const ACTIVE_HOUR: SQL = sql.raw(`date_trunc('hour', p.last_active_at at time zone 'UTC')`);

/**
 * The calendar year of birth, exactly as both discovery indexes key it: asked as a list of years,
 * the index is descended once per cell (or country) and year, so within each it reads only the
 * recent hours of people born that year rather than every age's recent entries.
 */
const BIRTH_YEAR: SQL = sql.raw(`(extract(year from p.birth_date)::int)`);

/**
 * How far back each slice of the scan reaches, newest first: the scan reads the people active in
 * the last hour or two, and each older slice only when the newer ones left the candidate limit
 * unfilled. Each slice reaches three times as far back as the one before, so a scan reads at most
 * about three times the people it keeps, whatever the local pattern of activity; a slice costs a
 * rescan of the arms (one index descent per cell and birth year), which is what a finer split
 * would spend more of where people are few.
 */
const SLICE_HOURS = [1, 3, 9, 27, 81] as const;

/** One arm of the candidate scan: its condition, and whether its index is keyed by the hour of activity (read in slices). */
interface Arm {
  sliced: boolean;
  where: SQL;
}

interface Ranked {
  userId: string;
  score: number;
}

/** Candidates that pass every filter both ways, scored and sorted, best first. */
export async function rankCandidates(ctx: DiscoveryContext, viewer: Viewer, wishes: SessionViewer, options: DiscoveryOptions): Promise<Ranked[]> {
  const today = utcDay(ctx.now);
  const arms = viewer.interestedIn.length === 0 ? [] : candidateArms(viewer, birthYears(wishes, today));
  if (arms.length === 0) return [];
  const me = viewer.userId;
  const limit = options.candidateLimit;
  // Hour starts (UTC) that bound the slices, newest first: slice 1 is from[0] on, slice k is
  // from[k-1] up to from[k-2], the last slice everything before. A viewer without a position
  // reads their country whole, as one slice.
  const from = SLICE_HOURS.map((h) => new Date(Math.floor((ctx.now - h * HOUR_MS) / HOUR_MS) * HOUR_MS).toISOString());
  const sliced = arms.every((arm) => arm.sliced);
  const lows = sliced ? [...from, "-infinity"] : ["-infinity"];
  const highs = sliced ? ["infinity", ...from] : ["infinity"];
  const arm = (where: SQL) => sql`select p.user_id, p.birth_date::text as birth_date, p.age_min, p.age_max, p.max_distance_km, p.interests, p.latitude, p.longitude, p.last_active_at,
              date_part('epoch', p.last_active_at) * 1000 as last_active_ms, date_part('epoch', p.created_at) * 1000 as created_ms
            from profiles p
            where ${ACTIVE_HOUR} >= s.lo and ${ACTIVE_HOUR} < s.hi
              and p.visibility = 'visible'
              and p.user_id <> ${me}
              and ${wishedBothWays(wishes, today)}
              and ${where}
              and p.user_id not in (select id from excluded)`; // every id there is NOT NULL: no NULL trap in NOT IN
  // The slices in order, each read only while the limit is unfilled: the arms are planned once,
  // as index scans that take the slice's bounds on the hour as parameters (OFFSET 0 keeps the
  // lateral subquery from being flattened into a join that reads every hour), and are rescanned
  // per slice. The sort is by slice first and its input is already in slice order, so it sorts
  // one slice at a time and stops pulling once whole slices hold `limit` rows: a slice after
  // that is read only up to its first passing row. The answer is that of one sort by last
  // activity, since everyone in a newer slice is more recently active than anyone in an older one.
  const rows = await preparedRows<CandidateRow>(
    ctx.db,
    sql`with excluded as materialized (${excludedIds(me, today)})
        select p.user_id, p.birth_date, p.age_min, p.age_max, p.max_distance_km, p.interests, p.latitude, p.longitude, p.last_active_ms, p.created_ms
        from (select * from unnest(${sql.param(lows)}::timestamp[], ${sql.param(highs)}::timestamp[]) with ordinality s(lo, hi, k) order by s.k) s
        cross join lateral (${sql.join(arms.map((a) => arm(a.where)), sql` union all `)} offset 0) p
        order by s.k, p.last_active_at desc
        limit ${limit}`,
  );

  const viewerSide = { age: wishes.age, ageMin: viewer.ageMin, ageMax: viewer.ageMax, maxDistanceKm: viewer.maxDistanceKm, interests: viewer.interests };
  const viewerInterests = new Set(viewer.interests);
  const ageOf = agesOn(ctx.now);
  const placed = viewer.latitude !== null && viewer.longitude !== null;
  const ranked = rows.map((row) => {
    const km =
      placed && row.latitude !== null && row.longitude !== null
        ? distanceKm({ latitude: viewer.latitude as number, longitude: viewer.longitude as number }, { latitude: row.latitude, longitude: row.longitude })
        : null;
    const { score } = reciprocalScore({
      viewer: viewerSide,
      candidate: { age: ageOf(row.birth_date), ageMin: row.age_min, ageMax: row.age_max, maxDistanceKm: row.max_distance_km, interests: row.interests },
      distanceKm: km,
      lastActiveMs: row.last_active_ms,
      createdMs: row.created_ms,
      now: ctx.now,
      overlap: storedInterestOverlap(viewerInterests, row.interests),
    });
    const userId = row.user_id;
    return { userId, score };
  });
  ranked.sort((a, b) => b.score - a.score || (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0));
  return ranked.slice(0, options.snapshotSize);
}

/** The calendar years the wished birth dates fall in (wishedBothWays bounds them exactly). */
function birthYears(wishes: SessionViewer, today: string): number[] {
  const first = Number(yearsBefore(today, wishes.ageMax + 1).slice(0, 4));
  const last = Number(yearsBefore(today, wishes.ageMin).slice(0, 4));
  return Array.from({ length: Math.max(0, last - first + 1) }, (_, i) => first + i);
}

/**
 * Who is near enough, as separate arms of one UNION ALL, so that each arm can use its own index
 * (an OR of the two made the planner read every match from the heap):
 * - placed profiles within both people's maximum distance: the one-degree cells that cover a
 *   bounding box (./geo-cells.ts; read from profiles_discovery_placed_idx cell by cell and birth
 *   year by birth year, within each the most recent hours of activity first, see SLICE_HOURS),
 *   then the box itself, then the exact great-circle distance;
 * - profiles without a position, when they share the viewer's country (profiles_discovery_unplaced_idx,
 *   country by birth year, in the same slices of hours).
 * A viewer without a position sees their country (placed or not); without a country either, nobody.
 */
function candidateArms(viewer: Viewer, years: number[]): Arm[] {
  const sameCountry = viewer.country === null ? null : sql`p.country = ${viewer.country}`;
  if (viewer.latitude === null || viewer.longitude === null) return sameCountry ? [{ sliced: false, where: sameCountry }] : [];
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
  const placed = sql`${cellCondition} and ${BIRTH_YEAR} = any(${sql.param(years)}::int[]) and p.latitude between ${box.latMin}::float8 and ${box.latMax}::float8 and ${lonCondition}
      and ${nearEnough(lat, lon, km)}`;
  const placedArm = { sliced: true, where: placed };
  const unplaced = sql`(p.latitude is null or p.longitude is null) and ${sameCountry} and ${BIRTH_YEAR} = any(${sql.param(years)}::int[])`;
  return sameCountry ? [placedArm, { sliced: true, where: unplaced }] : [placedArm];
}

