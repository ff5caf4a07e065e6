import { sql } from "drizzle-orm";
import { preparedRows } from "../../db/rows";
import { toCard, type ProfileCard } from "../profiles/card";
import type { DiscoveryContext, DiscoveryOptions } from "./feed";
import { notExcluded, stillFits, utcDay, viewerVisible } from "./filters";
import type { Session } from "./session";

/** One card as the page query returns it (all null but viewer_visible when no card passed). */
interface PageRow extends Record<string, unknown> {
  /** 1-based position in the window. */
  ord: number | null;
  user_id: string;
  display_name: string;
  birth_date: string;
  gender: string;
  tagline: string | null;
  bio: string | null;
  interests: string[];
  photos: string[];
  languages: string[];
  city: string | null;
  country: string | null;
  latitude: number | null;
  longitude: number | null;
  /** Epoch milliseconds (the driver hands timestamps over as text). */
  last_active_ms: number;
  viewer_visible: boolean;
}

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
    const rows = await preparedRows<PageRow>(
      ctx.db,
      sql`with w (user_id, ord) as (select * from unnest(${sql.param(window)}::text[]) with ordinality),
          page as (
            select w.ord::int as ord, p.user_id, p.display_name, p.birth_date::text as birth_date, p.gender, p.tagline, p.bio, p.interests, p.photos, p.languages, p.city, p.country,
              p.latitude, p.longitude, date_part('epoch', p.last_active_at) * 1000 as last_active_ms
            from w join profiles p on p.user_id = w.user_id
            where p.visibility = 'visible'
              and ${notExcluded(session.u, today, options.dailyImpressionCap, sql`${sql.param(window)}::text[]`)}
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
          select p.*, v.viewer_visible
          from (select ${viewerVisible(session)} as viewer_visible) v left join page p on true
          order by p.ord`,
    );
    // The rest of the session is not served to a viewer who is hidden now.
    if (rows[0] && !rows[0].viewer_visible) return { cards, next: session.ids.length };
    const served = rows.filter((row) => row.ord !== null);
    for (const row of served) {
      cards.push(
        toCard(
          {
            userId: row.user_id,
            displayName: row.display_name,
            birthDate: row.birth_date,
            gender: row.gender,
            tagline: row.tagline,
            bio: row.bio,
            interests: row.interests,
            photos: row.photos,
            languages: row.languages,
            city: row.city,
            country: row.country,
            latitude: row.latitude,
            longitude: row.longitude,
            lastActiveAt: new Date(row.last_active_ms),
          },
          from,
          ctx.now,
        ),
      );
    }
    // A full page ends right after its last card; otherwise the whole window was used up.
    const last = served[served.length - 1];
    position += served.length === need && last ? (last.ord as number) : window.length;
  }
  return { cards, next: position };
}

