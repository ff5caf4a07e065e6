import { sql, type SQL } from "drizzle-orm";
import { EARTH_RADIUS_KM } from "../profiles/card";

/**
 * The feed's position box and the one-degree cells of latitude and longitude that cover it, the
 * second key of profiles_discovery_placed_idx (migration 0024). A box covers a handful of cells; asking the index for those
 * cells and the wished birth dates inside each reads only the people near enough and of the right
 * age, where a latitude range read the whole band around the globe at that latitude (every city
 * sharing it) and checked longitude and age entry by entry.
 *
 * Cells are numbered latitude-major: (floor(latitude) + 90) * 361 + floor(longitude) + 180, so
 * latitude 90 and longitude 180 get cells of their own and every number is unique.
 */
export const GEO_CELL_OF_PROFILE: SQL = sql.raw("((floor(p.latitude)::int + 90) * 361 + floor(p.longitude)::int + 180)");

const LONGITUDE_CELLS = 361;
const KM_PER_DEGREE = (Math.PI * EARTH_RADIUS_KM) / 180;

/**
 * Above this many cells the box is read as whole latitude bands (a range of cell numbers) rather
 * than cell by cell: each listed cell is one descent of the index per wished gender, and a box
 * near a pole or 500 km wide at high latitude spans hundreds of them.
 */
export const MAX_LISTED_CELLS = 256;

export interface Box {
  latMin: number;
  latMax: number;
  /**
   * Longitude intervals, each with min ≤ max, within [-180, 180]; two when the box crosses the
   * antimeridian, one of [-180, 180] when it spans every longitude.
   */
  lonRanges: [number, number][];
}

export type CellSelection = { cells: number[] } | { band: [number, number] };

/** The cells that hold every point of the box, or the latitude band's cell range when too many. */
export function cellsCovering(box: Box): CellSelection {
  const rowMin = Math.floor(Math.max(-90, box.latMin)) + 90;
  const rowMax = Math.floor(Math.min(90, box.latMax)) + 90;
  const columns: number[] = [];
  for (const [lo, hi] of box.lonRanges) {
    for (let c = Math.floor(Math.max(-180, lo)) + 180; c <= Math.floor(Math.min(180, hi)) + 180; c++) columns.push(c);
  }
  if ((rowMax - rowMin + 1) * columns.length > MAX_LISTED_CELLS) {
    return { band: [rowMin * LONGITUDE_CELLS, rowMax * LONGITUDE_CELLS + LONGITUDE_CELLS - 1] };
  }
  const cells: number[] = [];
  for (let row = rowMin; row <= rowMax; row++) for (const c of columns) cells.push(row * LONGITUDE_CELLS + c);
  return { cells };
}

/** The cell a position falls in, as GEO_CELL_OF_PROFILE numbers it. */
export function cellOf(latitude: number, longitude: number): number {
  return (Math.floor(latitude) + 90) * LONGITUDE_CELLS + Math.floor(longitude) + 180;
}

/**
 * A latitude/longitude box holding every point within km of (lat, lon), with 1 % to spare: the
 * widest longitude span reachable within km (Matuschek), split in two across the antimeridian,
 * and every longitude when the circle comes near a pole.
 */
export function positionBox(lat: number, lon: number, km: number): Box {
  const dLat = (km / KM_PER_DEGREE) * 1.01;
  const box: Box = { latMin: Math.max(-90, lat - dLat), latMax: Math.min(90, lat + dLat), lonRanges: [[-180, 180]] };
  const angular = km / EARTH_RADIUS_KM;
  const cosLat = Math.cos((lat * Math.PI) / 180);
  if (Math.abs(lat) + dLat >= 89 || Math.sin(angular) >= cosLat) return box;
  const dLon = ((Math.asin(Math.sin(angular) / cosLat) * 180) / Math.PI) * 1.01;
  const lo = lon - dLon;
  const hi = lon + dLon;
  if (dLon >= 180) return box;
  if (lo < -180) box.lonRanges = [[lo + 360, 180], [-180, hi]];
  else if (hi > 180) box.lonRanges = [[lo, 180], [-180, hi - 360]];
  else box.lonRanges = [[lo, hi]];
  return box;
}
