import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/port";
import { preparedRows } from "../../db/rows";
import { agesOn, distanceKm } from "../profiles/card";
import type { DiscoveryContext, DiscoveryOptions } from "./feed";
import { nearEnough, notExcluded, utcDay, wishedBothWays } from "./filters";
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

interface Ranked {
  userId: string;
  score: number;
}

/** Candidates that pass every filter both ways, scored and sorted, best first. */
export async function rankCandidates(ctx: DiscoveryContext, viewer: Viewer, wishes: SessionViewer, options: DiscoveryOptions): Promise<Ranked[]> {
  const arms = viewer.interestedIn.length === 0 ? [] : candidateArms(viewer);
  if (arms.length === 0) return [];
  const today = utcDay(ctx.now);
  const me = viewer.userId;
  const rows = await preparedRows<CandidateRow>(
    ctx.db,
    sql`with candidates as (${sql.join(
      arms.map(
        (arm) => sql`select p.user_id, p.birth_date::text as birth_date, p.age_min, p.age_max, p.max_distance_km, p.interests, p.latitude, p.longitude, p.last_active_at,
              date_part('epoch', p.last_active_at) * 1000 as last_active_ms, date_part('epoch', p.created_at) * 1000 as created_ms
            from profiles p
            where p.visibility = 'visible'
              and p.user_id <> ${me}
              and ${wishedBothWays(wishes, today)}
              and ${arm}`,
      ),
      sql` union all `,
    )})
        select p.user_id, p.birth_date, p.age_min, p.age_max, p.max_distance_km, p.interests, p.latitude, p.longitude, p.last_active_ms, p.created_ms
        from candidates p
        where ${notExcluded(me, today, options.dailyImpressionCap, "set")}
        order by p.last_active_at desc
        limit ${options.candidateLimit}`,
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

