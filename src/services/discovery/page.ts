import { sql } from "drizzle-orm";
import { preparedRows } from "../../db/rows";
import { toCard, type ProfileCard } from "../profiles/card";
import type { DiscoveryContext, DiscoveryOptions } from "./feed";
import { notExcluded, stillFits, utcDay, viewerVisible } from "./filters";
import type { Session } from "./session";

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
export async function servePage(
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

