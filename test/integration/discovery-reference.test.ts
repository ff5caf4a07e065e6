import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "../../src/db/rows";
import { createMemoryStore } from "../../src/kv/memory";
import { fixedClock } from "../../src/platform/clock";
import { webRandom } from "../../src/platform/ids";
import { discover, utcDay, type DiscoveryContext } from "../../src/services/discovery/feed";
import { interestOverlap, reciprocalScore } from "../../src/services/discovery/score";
import { useTestDatabase } from "../support/environment";

/**
 * The feed against a reference: a small seeded population with every kind of relation between
 * people, and for many viewers a plain query (written to be read, not to be fast) that says who
 * belongs in their feed, ranked by the documented score. The feed, walked page by page, must
 * return exactly those people in exactly that order. Whatever the fast path does to find its
 * candidates (cells, indexes, pools, sessions), it has to agree with this.
 */
const env = useTestDatabase();
const db = () => env.db.database.db;

const NOW = Date.UTC(2026, 5, 15, 12, 0, 0);
const TODAY = utcDay(NOW);
const CAP = 12;
const POPULATION = 220;
const VIEWERS = 70;

/** A small deterministic generator (mulberry32), so a failure replays exactly. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const GENDERS = ["woman", "man", "nonbinary", "other"] as const;
const INTERESTS = ["hiking", "jazz", "cooking", "yoga", "books", "cinema", "tennis", "wine", "dogs", "travel"];
/** Two towns 50 km apart in one country, a third across a border, and a fourth far away. */
const PLACES = [
  { country: "AA", latitude: 47.0, longitude: 8.0 },
  { country: "AA", latitude: 47.3, longitude: 8.55 },
  { country: "BB", latitude: 47.1, longitude: 8.9 },
  { country: "AA", latitude: 49.5, longitude: 11.0 },
] as const;

interface Person {
  id: string;
}

async function seed(): Promise<Person[]> {
  const rand = generator(40);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const people: Person[] = [];
  const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
  for (let i = 0; i < POPULATION; i++) {
    const id = `usr_ref${String(i).padStart(4, "0")}`;
    const place = pick(PLACES);
    const r = rand();
    const gender = r < 0.45 ? "woman" : r < 0.9 ? "man" : pick(GENDERS);
    const w = rand();
    const interestedIn =
      w < 0.03 ? [] : w < 0.55 ? [gender === "woman" ? "man" : "woman"] : w < 0.8 ? ["woman", "man"] : w < 0.9 ? [gender] : [...GENDERS];
    const age = 18 + Math.floor(rand() * 40);
    const birth = new Date(NOW - age * 365.25 * 86_400_000 - Math.floor(rand() * 360) * 86_400_000);
    // Keep clear of 29 February: its birthdays are a calendar question the cell tests cover.
    if (birth.getUTCMonth() === 1 && birth.getUTCDate() === 29) birth.setUTCDate(28);
    const ageMin = Math.max(18, age - 2 - Math.floor(rand() * 10));
    const ageMax = Math.min(99, age + 2 + Math.floor(rand() * 12));
    const placed = rand() > 0.1;
    // Positions in whole micro-degrees and times in whole seconds: the reference works with the
    // stored values exactly, whatever precision the fast path carries them in.
    const latitude = placed ? round6(place.latitude + (rand() - 0.5) * 0.6) : null;
    const longitude = placed ? round6(place.longitude + (rand() - 0.5) * 0.8) : null;
    const country = rand() < 0.03 ? null : place.country;
    const interests = [...new Set(Array.from({ length: 1 + Math.floor(rand() * 4) }, () => pick(INTERESTS)))];
    const lastActive = new Date(Math.floor((NOW - rand() * 20 * 86_400_000) / 1000) * 1000);
    const created = new Date(Math.floor((NOW - 86_400_000 - rand() * 200 * 86_400_000) / 1000) * 1000);
    await db().execute(sql`insert into users (id, subject, email, role, created_at) values (${id}, ${`ref-${i}`}, null, 'user', ${created})`);
    await db().execute(sql`
      insert into profiles (user_id, display_name, birth_date, gender, interested_in, age_min, age_max, max_distance_km, interests, latitude, longitude,
                            city, country, visibility, created_at, updated_at, last_active_at)
      values (${id}, ${`Ref ${i}`}, ${birth.toISOString().slice(0, 10)}, ${gender}, ${sql.param(interestedIn)}::text[], ${ageMin}, ${ageMax},
              ${pick([5, 20, 40, 60, 100, 300])}, ${sql.param(interests)}::text[], ${latitude}, ${longitude}, 'Town', ${country},
              ${rand() < 0.07 ? "hidden" : "visible"}, ${created}, ${created}, ${lastActive})`);
    people.push({ id });
  }

  // Relations: a sprinkle of everything the feed must leave out, in both directions.
  const pair = () => {
    const a = pick(people).id;
    let b = pick(people).id;
    while (b === a) b = pick(people).id;
    return [a, b] as const;
  };
  const at = new Date(NOW - 3_600_000);
  for (let n = 0; n < 500; n++) {
    const [a, b] = pair();
    await db().execute(sql`insert into swipes (swiper_id, target_id, action, created_at) values (${a}, ${b}, ${pick(["like", "pass", "wink"])}, ${at}) on conflict do nothing`);
  }
  for (let n = 0; n < 60; n++) {
    const [a, b] = pair();
    const [low, high] = a < b ? [a, b] : [b, a];
    const unmatched = rand() < 0.4 ? at : null;
    await db().execute(sql`insert into matches (id, user_low, user_high, created_at, unmatched_at, unmatched_by)
      values (${`mat_ref${n}`}, ${low}, ${high}, ${at}, ${unmatched}, ${unmatched ? low : null}) on conflict do nothing`);
  }
  for (let n = 0; n < 50; n++) {
    const [a, b] = pair();
    await db().execute(sql`insert into blocks (blocker_id, blocked_id, created_at) values (${a}, ${b}, ${at}) on conflict do nothing`);
  }
  for (let n = 0; n < 30; n++) {
    const [a, b] = pair();
    await db().execute(sql`insert into reports (id, reporter_id, reported_id, reason, created_at) values (${`rep_ref${n}`}, ${a}, ${b}, 'spam', ${at})`);
  }
  // Impressions: some people at today's cap, some one short of it, some capped only yesterday.
  const yesterday = utcDay(NOW - 86_400_000);
  for (const { id } of people) {
    const r = rand();
    if (r < 0.1) {
      await db().execute(sql`insert into profile_impressions (user_id, day, count) values (${id}, ${TODAY}::date, ${CAP + Math.floor(rand() * 3)})`);
      await db().execute(sql`insert into profile_impressions_capped (day, user_id) values (${TODAY}::date, ${id})`);
    } else if (r < 0.2) {
      await db().execute(sql`insert into profile_impressions (user_id, day, count) values (${id}, ${TODAY}::date, ${CAP - 1 - Math.floor(rand() * 3)})`);
    } else if (r < 0.25) {
      await db().execute(sql`insert into profile_impressions (user_id, day, count) values (${id}, ${yesterday}::date, ${CAP + 5})`);
      await db().execute(sql`insert into profile_impressions_capped (day, user_id) values (${yesterday}::date, ${id})`);
    }
  }
  return people;
}

interface ReferenceRow extends Record<string, unknown> {
  user_id: string;
  candidate_age: number;
  viewer_age: number;
  candidate_age_min: number;
  candidate_age_max: number;
  candidate_max_km: number;
  viewer_age_min: number;
  viewer_age_max: number;
  viewer_max_km: number;
  candidate_interests: string[];
  viewer_interests: string[];
  km: number | null;
  last_active_ms: string;
  created_ms: string;
}

/**
 * Everyone the viewer may be shown, by the feed's rules read one by one: both visible, each the
 * gender and age the other asked for, within both maximum distances when both have a position
 * and otherwise in the same country, never swiped by the viewer, never matched, no block or
 * report either way, and under today's impression cap. Then ranked by the reciprocal score,
 * best first, ties by id.
 */
async function referenceFeed(viewerId: string, candidateLimit = Infinity): Promise<string[]> {
  const rows = await queryRows<ReferenceRow>(
    db(),
    sql`with today as (select ${TODAY}::date as d)
    select c.user_id,
           date_part('year', age(today.d, c.birth_date))::int as candidate_age,
           date_part('year', age(today.d, v.birth_date))::int as viewer_age,
           c.age_min as candidate_age_min, c.age_max as candidate_age_max, c.max_distance_km as candidate_max_km,
           v.age_min as viewer_age_min, v.age_max as viewer_age_max, v.max_distance_km as viewer_max_km,
           c.interests as candidate_interests, v.interests as viewer_interests,
           case when v.latitude is not null and v.longitude is not null and c.latitude is not null and c.longitude is not null
                then 2 * 6371 * asin(sqrt(
                       sin(radians(c.latitude - v.latitude) / 2) ^ 2
                       + cos(radians(v.latitude)) * cos(radians(c.latitude)) * sin(radians(c.longitude - v.longitude) / 2) ^ 2))
           end as km,
           (extract(epoch from c.last_active_at) * 1000)::int8::text as last_active_ms,
           (extract(epoch from c.created_at) * 1000)::int8::text as created_ms
    from profiles v, profiles c, today
    where v.user_id = ${viewerId}
      and c.user_id <> v.user_id
      and v.visibility = 'visible' and c.visibility = 'visible'
      and c.gender = any(v.interested_in) and v.gender = any(c.interested_in)
      and date_part('year', age(today.d, c.birth_date)) between v.age_min and v.age_max
      and date_part('year', age(today.d, v.birth_date)) between c.age_min and c.age_max
      and not exists (select 1 from swipes s where s.swiper_id = v.user_id and s.target_id = c.user_id)
      and not exists (select 1 from matches m where m.user_low in (v.user_id, c.user_id) and m.user_high in (v.user_id, c.user_id))
      and not exists (select 1 from blocks b where (b.blocker_id, b.blocked_id) in ((v.user_id, c.user_id), (c.user_id, v.user_id)))
      and not exists (select 1 from reports r where (r.reporter_id, r.reported_id) in ((v.user_id, c.user_id), (c.user_id, v.user_id)))
      and not exists (select 1 from profile_impressions i where i.user_id = c.user_id and i.day = today.d and i.count >= ${CAP})`,
  );
  const viewer = (await queryRows<{ latitude: number | null; longitude: number | null; country: string | null }>(
    db(),
    sql`select latitude, longitude, country from profiles where user_id = ${viewerId}`,
  ))[0];
  const viewerPlaced = viewer?.latitude != null && viewer.longitude != null;
  const countries = new Map(
    (await queryRows<{ user_id: string; country: string | null; placed: boolean }>(
      db(),
      sql`select user_id, country, latitude is not null and longitude is not null as placed from profiles`,
    )).map((r) => [r.user_id, r]),
  );
  const near = rows.filter((r) => {
    if (r.km !== null) return r.km <= Math.min(r.viewer_max_km, r.candidate_max_km);
    // Either side without a position: the same country instead (and a country on both sides).
    const theirs = countries.get(r.user_id);
    return viewer?.country != null && theirs?.country === viewer.country && (viewerPlaced ? !theirs.placed : true);
  });
  // Only the most recently active `candidateLimit` of them are ranked.
  const kept = [...near].sort((a, b) => Number(b.last_active_ms) - Number(a.last_active_ms)).slice(0, candidateLimit);
  const scored = kept.map((r) => ({
    id: r.user_id,
    score: reciprocalScore({
      viewer: { age: r.viewer_age, ageMin: r.viewer_age_min, ageMax: r.viewer_age_max, maxDistanceKm: r.viewer_max_km, interests: r.viewer_interests },
      candidate: { age: r.candidate_age, ageMin: r.candidate_age_min, ageMax: r.candidate_age_max, maxDistanceKm: r.candidate_max_km, interests: r.candidate_interests },
      distanceKm: r.km,
      lastActiveMs: Number(r.last_active_ms),
      createdMs: Number(r.created_ms),
      now: NOW,
      overlap: interestOverlap(r.viewer_interests, r.candidate_interests),
    }).score,
  }));
  scored.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return scored.map((s) => s.id);
}

/** The fast path: every page of one session, as a client walks it. */
async function walkFeed(ctx: DiscoveryContext, viewerId: string, limit: number): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < 200; n++) {
    const page = await discover(ctx, viewerId, cursor === undefined ? { limit } : { limit, cursor });
    seen.push(...page.profiles.map((p) => p.userId));
    if (page.nextCursor === null) return seen;
    cursor = page.nextCursor;
  }
  throw new Error("feed never ended");
}

describe("the feed against the reference query", () => {
  let people: Person[] = [];
  beforeAll(async () => {
    people = await seed();
  }, 120_000);

  it("returns the same people in the same order for every viewer, page after page", async () => {
    const clock = fixedClock(NOW);
    const ctx: DiscoveryContext = { db: db(), kv: createMemoryStore({ clock }), random: webRandom, now: NOW, options: { dailyImpressionCap: CAP } };
    let nonEmpty = 0;
    let total = 0;
    for (const [n, { id }] of people.slice(0, VIEWERS).entries()) {
      // Computed just before the walk: earlier viewers' pages counted impressions, and some
      // people have reached the cap since.
      const expected = await referenceFeed(id);
      const actual = await walkFeed(ctx, id, 3 + (n % 5) * 4);
      expect(actual, `viewer ${id}`).toEqual(expected);
      if (expected.length > 0) nonEmpty++;
      total += expected.length;
    }
    // The population is built so that most feeds hold people and the cap comes into play.
    expect(nonEmpty).toBeGreaterThan(VIEWERS / 2);
    expect(total).toBeGreaterThan(VIEWERS * 3);
    const [capped] = await queryRows<{ n: number }>(db(), sql`select count(*)::int as n from profile_impressions_capped where day = ${TODAY}::date`);
    expect(capped?.n).toBeGreaterThan(POPULATION / 10);
  }, 120_000);

  it("keeps the most recently active candidates when there are more than it ranks", async () => {
    const clock = fixedClock(NOW);
    let truncated = 0;
    for (const [n, { id }] of people.slice(VIEWERS, VIEWERS + 40).entries()) {
      // Small limits, so that for some viewers the people active since yesterday fill them and for
      // others the older days are read too.
      const candidateLimit = 1 + (n % 6);
      const ctx: DiscoveryContext = { db: db(), kv: createMemoryStore({ clock }), random: webRandom, now: NOW, options: { dailyImpressionCap: CAP, candidateLimit } };
      const all = await referenceFeed(id);
      const expected = await referenceFeed(id, candidateLimit);
      const actual = await walkFeed(ctx, id, 4);
      expect(actual, `viewer ${id}`).toEqual(expected);
      if (all.length > expected.length) truncated++;
    }
    expect(truncated).toBeGreaterThan(10);
  }, 120_000);

  it("keeps the most recently active when most people were active within the last hours", async () => {
    // The same people, their last activity moved into the last three days and most of it into the
    // last hours (whole seconds, from a hash of the id), so that the scan's slices of time each
    // hold someone and the small limits below fill in different ones. Put back afterwards.
    const saved = await queryRows<{ user_id: string; at: string }>(db(), sql`select user_id, last_active_at::text as at from profiles where user_id like 'usr_ref%'`);
    const hoursAgo = (id: string) =>
      queryRows<{ h: number }>(db(), sql`select extract(epoch from ${new Date(NOW)}::timestamptz - last_active_at) / 3600 as h from profiles where user_id = ${id}`);
    try {
      await db().execute(sql`update profiles
        set last_active_at = date_trunc('second', ${new Date(NOW)}::timestamptz - power((hashtext(user_id) & 1048575) / 1048576.0, 3) * interval '72 hours')
        where user_id like 'usr_ref%'`);
      const clock = fixedClock(NOW);
      const slicesReached = new Set<number>();
      for (const [n, { id }] of people.slice(0, 60).entries()) {
        const candidateLimit = 1 + (n % 8);
        const ctx: DiscoveryContext = { db: db(), kv: createMemoryStore({ clock }), random: webRandom, now: NOW, options: { dailyImpressionCap: CAP, candidateLimit } };
        const expected = await referenceFeed(id, candidateLimit);
        const actual = await walkFeed(ctx, id, 4);
        expect(actual, `viewer ${id}`).toEqual(expected);
        // How far back the kept candidates reach: which of the 1, 3, 9, 27 and 81 hour slices the scan needed.
        const reach = Math.max(0, ...(await Promise.all(expected.map(async (c) => Number((await hoursAgo(c))[0]?.h ?? 0)))));
        if (expected.length > 0) slicesReached.add([2, 4, 10, 28, 82].findIndex((h) => reach < h));
      }
      expect(slicesReached.size).toBeGreaterThanOrEqual(3);
    } finally {
      await db().execute(sql`update profiles p set last_active_at = s.at::timestamptz
        from unnest(${sql.param(saved.map((r) => r.user_id))}::text[], ${sql.param(saved.map((r) => r.at))}::text[]) as s(user_id, at)
        where p.user_id = s.user_id`);
    }
  }, 120_000);
});
