import { sql, type SQL } from "drizzle-orm";
import { EARTH_RADIUS_KM } from "../profiles/card";
import type { Session, SessionViewer } from "./session";

/** The feed's filters as SQL over a profile `p`, shared by the candidate scan and every page's re-check. */

/**
 * Everything that can change between pages of one session, and so is checked again on every
 * page: swipes by the viewer (any action), matches ever (unmatched too), blocks and reports
 * either way (a report hides the two people from each other even after its block is lifted), and
 * today's impression cap. A page checks the few ids of its window (`among`, a text[]): each table
 * is read once for all of them (the viewer's swipes and the counters only for those ids, the
 * viewer's few matches, blocks and reports whole) and held as a hashed set, rather than probed
 * once per row and table. Every column read is NOT NULL, so NOT IN has no NULL trap here.
 */
export function notExcluded(me: string, today: string, cap: number, among: SQL): SQL {
  return sql`p.user_id not in (select s.target_id from swipes s where s.swiper_id = ${me} and s.target_id = any(${among}))
          and p.user_id not in (${peopleApart(me)})
          and p.user_id not in (select i.user_id from profile_impressions i where i.user_id = any(${among}) and i.day = ${today}::date and i.count >= ${cap}::int)`;
}

/** Everyone the viewer was ever matched with, or blocked or reported either way (column `id`). */
function peopleApart(me: string): SQL {
  return sql`select m.user_high as id from matches m where m.user_low = ${me}
          union all select m.user_low from matches m where m.user_high = ${me}
          union all select b.blocked_id from blocks b where b.blocker_id = ${me}
          union all select b.blocker_id from blocks b where b.blocked_id = ${me}
          union all select r.reported_id from reports r where r.reporter_id = ${me}
          union all select r.reporter_id from reports r where r.reported_id = ${me}`;
}

/**
 * The same exclusions as one list of ids (column `id`), for the candidate scan, which checks
 * hundreds of rows: read once, then each slice of the scan holds it as a hashed set. The capped
 * profiles are the day's list in profile_impressions_capped, which the counting statement keeps.
 */
export function excludedIds(me: string, today: string): SQL {
  return sql`select s.target_id as id from swipes s where s.swiper_id = ${me}
          union all ${peopleApart(me)}
          union all select c.user_id from profile_impressions_capped c where c.day = ${today}::date`;
}

/** A placed profile `p` within both people's maximum distance of (lat, lon), great-circle. */
export function nearEnough(lat: number, lon: number, km: number): SQL {
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
export function stillFits(session: Session, today: string): SQL {
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
export function wishedBothWays(v: SessionViewer, today: string): SQL {
  return sql`p.gender = any(${sql.param(v.interestedIn)}::text[])
              and ${v.gender} = any(p.interested_in)
              and p.birth_date > ${yearsBefore(today, v.ageMax + 1)}::date
              and p.birth_date <= ${yearsBefore(today, v.ageMin)}::date
              and p.age_min <= ${v.age}::int and p.age_max >= ${v.age}::int`;
}

/** A viewer who hid their profile mid-session gets no more cards from it. */
export function viewerVisible(session: Session): SQL {
  return sql`exists (select 1 from profiles viewer where viewer.user_id = ${session.u} and viewer.visibility = 'visible')`;
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

