import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/port";
import { preparedRows } from "../../db/rows";
import { agesOnEpochDays, distanceKm } from "../profiles/card";
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
export async function rankCandidates(ctx: DiscoveryContext, viewer: Viewer, wishes: SessionViewer, options: DiscoveryOptions): Promise<Ranked[]> {
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

