import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blocks, matches, profileImpressions, profiles, reports, swipes } from "../../src/db/schema";
import { queryRows } from "../../src/db/rows";
import { DISCOVERY_DEFAULTS, utcDay } from "../../src/services/discovery/feed";
import { buildTestApp, fixedClock, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, signIn, type Person } from "../support/people";

const env = useTestEnvironment();
let t: TestApp;
beforeAll(() => {
  t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE });
});

const db = () => env.db.database.db;
const YEAR = 365.25 * 24 * 3_600_000;

/** Every test gets its own spot on the map (5° of longitude apart, ≥ 500 km), so feeds never mix. */
let spots = 0;
function newSpot(): { latitude: number; longitude: number; country: string } {
  const n = spots++;
  return { latitude: 10, longitude: -170 + 5 * n, country: `T${n}` };
}

/** A birth date for someone who is `age` years (and half a year) old today. */
function born(age: number): string {
  return new Date(Date.now() - (age + 0.5) * YEAR).toISOString().slice(0, 10);
}

/** Kilometres east of a spot, as a longitude (at latitude 10°). */
const east = (spot: { longitude: number }, km: number) => spot.longitude + km / (111.195 * Math.cos((10 * Math.PI) / 180));

interface ProfileInput {
  gender?: string;
  interestedIn?: string[];
  age?: number;
  ageMin?: number;
  ageMax?: number;
  maxDistanceKm?: number;
  interests?: string[];
  latitude?: number | null;
  longitude?: number | null;
  country?: string | null;
  visibility?: string;
  name?: string;
}

/** A signed-in person with a profile inserted straight into the database. */
async function member(spot: { latitude: number; longitude: number; country: string }, p: ProfileInput = {}): Promise<Person> {
  const person = await signIn(t, env.issuer);
  const now = new Date();
  await db()
    .insert(profiles)
    .values({
      userId: person.id,
      displayName: p.name ?? `P ${person.id.slice(-6)}`,
      birthDate: born(p.age ?? 30),
      gender: p.gender ?? "woman",
      interestedIn: p.interestedIn ?? ["woman", "man", "nonbinary", "other"],
      ageMin: p.ageMin ?? 18,
      ageMax: p.ageMax ?? 99,
      maxDistanceKm: p.maxDistanceKm ?? 100,
      interests: p.interests ?? [],
      latitude: p.latitude === undefined ? spot.latitude : p.latitude,
      longitude: p.longitude === undefined ? spot.longitude : p.longitude,
      country: p.country === undefined ? spot.country : p.country,
      visibility: p.visibility ?? "visible",
      createdAt: now,
      updatedAt: now,
      lastActiveAt: now,
    });
  return person;
}

interface Card {
  userId: string;
  age: number;
  distanceKm: number | null;
}
interface Page {
  profiles: Card[];
  nextCursor: string | null;
}

async function feed(who: Person, query = ""): Promise<Page> {
  const res = await t.request(`/api/v1/profiles/discover${query}`, { headers: who.headers });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return JSON.parse(text) as Page;
}

const idsOf = (page: Page) => page.profiles.map((p) => p.userId);

/** Walks every page of one session. */
async function walk(who: Person, limit: number, between?: (page: number, seen: string[]) => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | null = null;
  for (let n = 0; n < 100; n++) {
    const page: Page = await feed(who, `?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    expect(page.profiles.length).toBeLessThanOrEqual(limit);
    seen.push(...idsOf(page));
    cursor = page.nextCursor;
    if (!cursor) return seen;
    await between?.(n, seen);
  }
  throw new Error("feed never ended");
}

describe("both-sides filters", () => {
  // I am a 30-year-old man looking for women 25–35 within 50 km.
  const me: ProfileInput = { gender: "man", interestedIn: ["woman"], age: 30, ageMin: 25, ageMax: 35, maxDistanceKm: 50 };
  // A woman who fits and wants a man like me.
  const fits: ProfileInput = { gender: "woman", interestedIn: ["man"], age: 30, ageMin: 25, ageMax: 35, maxDistanceKm: 50 };

  const cases: [string, (spot: ReturnType<typeof newSpot>) => { mine?: ProfileInput; theirs?: ProfileInput }][] = [
    ["gender: they are not what I look for", () => ({ theirs: { gender: "nonbinary" } })],
    ["gender: I am not what they look for", () => ({ theirs: { interestedIn: ["woman"] } })],
    ["age: they are outside my range", () => ({ theirs: { age: 40, ageMax: 45 } })],
    ["age: I am outside their range", () => ({ theirs: { ageMin: 32, ageMax: 40 } })],
    ["distance: beyond my maximum", (s) => ({ mine: { maxDistanceKm: 20 }, theirs: { longitude: east(s, 30), maxDistanceKm: 100 } })],
    ["distance: beyond their maximum", (s) => ({ mine: { maxDistanceKm: 100 }, theirs: { longitude: east(s, 30), maxDistanceKm: 20 } })],
    ["visibility: they are hidden", () => ({ theirs: { visibility: "hidden" } })],
    ["visibility: I am hidden", () => ({ mine: { visibility: "hidden" } })],
  ];

  it.each(cases)("%s → not in my feed", async (_name, setup) => {
    const spot = newSpot();
    const { mine = {}, theirs = {} } = setup(spot);
    const caller = await member(spot, { ...me, ...mine });
    const excluded = await member(spot, { ...fits, ...theirs });
    const control = await member(spot, fits);
    const ids = idsOf(await feed(caller));
    expect(ids).not.toContain(excluded.id);
    // The control fits both ways, so the feed is not just empty — except when I am hidden,
    // where nobody may be shown to me.
    if (mine.visibility === "hidden") expect(ids).toEqual([]);
    else expect(ids).toEqual([control.id]);
  });

  it("control: a mutual fit on every filter is in the feed, with an age and a rounded distance, and nothing finer", async () => {
    const spot = newSpot();
    const caller = await member(spot, me);
    const other = await member(spot, { ...fits, longitude: east(spot, 12) });
    const page = await feed(caller);
    expect(idsOf(page)).toEqual([other.id]);
    const card = page.profiles[0] as Card & Record<string, unknown>;
    expect(card.age).toBe(30);
    expect(card.distanceKm).toBe(10);
    // No fit score either: it moves with the exact distance.
    expect(card).not.toHaveProperty("score");
    expect(card).not.toHaveProperty("latitude");
    expect(card).not.toHaveProperty("birthDate");
    expect(page.nextCursor).toBeNull();
  });

  it("a card shows stored text exactly, whatever its characters, and matches the profile endpoint's card", async () => {
    const spot = newSpot();
    const caller = await member(spot, me);
    const awkward = 'quote " backslash \\ slash / "," ],[ newline\n tab\t bell\u0007 nul-free é 你好 🦊';
    const other = await member(spot, { ...fits, longitude: east(spot, 12), name: awkward.slice(0, 50), interests: [awkward, "plain"] });
    await db()
      .update(profiles)
      .set({ bio: awkward, tagline: null, city: awkward, photos: [`https://img.test/${encodeURIComponent(awkward)}.jpg`], languages: ["pt-BR"] })
      .where(sql`${profiles.userId} = ${other.id}`);
    const card = (await feed(caller)).profiles[0] as Card & Record<string, unknown>;
    expect(card).toMatchObject({ userId: other.id, displayName: awkward.slice(0, 50), bio: awkward, tagline: null, city: awkward, interests: [awkward, "plain"], languages: ["pt-BR"] });
    const res = await t.request(`/api/v1/profile/${other.id}`, { headers: caller.headers });
    expect(res.status).toBe(200);
    expect(card).toEqual(await res.json());
  });

  it("without a position on either side, the same country stands in for distance", async () => {
    const spot = newSpot();
    const caller = await member(spot, me);
    const sameCountry = await member(spot, { ...fits, latitude: null, longitude: null });
    const otherCountry = await member(spot, { ...fits, latitude: null, longitude: null, country: `${spot.country}-elsewhere` });
    const ids = idsOf(await feed(caller));
    expect(ids).toContain(sameCountry.id);
    expect(ids).not.toContain(otherCountry.id);
  });

  it("never shows the caller", async () => {
    const spot = newSpot();
    // Someone who would match themselves on every filter.
    const caller = await member(spot, { gender: "woman", interestedIn: ["woman"] });
    const other = await member(spot, { gender: "woman", interestedIn: ["woman"] });
    expect(idsOf(await feed(caller))).toEqual([other.id]);
  });
});

describe("positions at the edges of the map", () => {
  // The position box is cut in longitude and latitude; these places need its special cases
  // (a box that wraps past ±180°, and one that spans every longitude near a pole). Each test has
  // a region of its own, away from the other tests' spots at latitude 10°.
  const open: ProfileInput = { gender: "woman", interestedIn: ["woman"], maxDistanceKm: 100 };
  const at = (latitude: number, longitude: number, country: string) => ({ latitude, longitude, country });
  const distanceTo = (page: Page, id: string) => page.profiles.find((p) => p.userId === id)?.distanceKm;

  it("finds people across the antimeridian, both ways, and no farther than the maximum", async () => {
    const west = await member(at(-17, 179.95, "FJ"), open);
    const east = await member(at(-17, -179.95, "FJ"), open);
    // 95 km east of `east`, so 105 km from `west`: inside one's maximum (100 km), outside the other's.
    const farEast = await member(at(-17, -179.06, "FJ"), open);
    const fromWest = await feed(west);
    expect(idsOf(fromWest).sort()).toEqual([east.id].sort());
    // 10.6 km over the line, shown rounded to 5 km.
    expect(distanceTo(fromWest, east.id)).toBe(10);
    expect(idsOf(await feed(east)).sort()).toEqual([west.id, farEast.id].sort());
  });

  it("finds people across the North Pole, where the box spans every longitude", async () => {
    const here = await member(at(89.6, 0, "NP"), open);
    const acrossThePole = await member(at(89.6, 180, "NP"), open);
    const aside = await member(at(89.6, -90, "NP"), open);
    const southward = await member(at(88, 0, "NP"), open);
    const page = await feed(here);
    expect(idsOf(page).sort()).toEqual([acrossThePole.id, aside.id].sort());
    // 0.8° of latitude over the pole (89 km), shown rounded to 5 km.
    expect(distanceTo(page, acrossThePole.id)).toBe(90);
    expect(idsOf(await feed(southward))).toEqual([]);
  });

  it("finds people across the South Pole too", async () => {
    const here = await member(at(-89.7, 45, "SP"), open);
    const across = await member(at(-89.7, -135, "SP"), open);
    expect(idsOf(await feed(here))).toEqual([across.id]);
    expect(idsOf(await feed(across))).toEqual([here.id]);
  });
});

describe("exclusions", () => {
  it("leaves out anyone I swiped (like, pass, wink), but not someone who swiped me", async () => {
    const spot = newSpot();
    const caller = await member(spot);
    const [liked, passed, winked, likedMe] = await Promise.all([member(spot), member(spot), member(spot), member(spot)]);
    const now = new Date();
    await db()
      .insert(swipes)
      .values([
        { swiperId: caller.id, targetId: liked.id, action: "like", createdAt: now },
        { swiperId: caller.id, targetId: passed.id, action: "pass", createdAt: now },
        { swiperId: caller.id, targetId: winked.id, action: "wink", createdAt: now },
        { swiperId: likedMe.id, targetId: caller.id, action: "like", createdAt: now },
      ]);
    expect(idsOf(await feed(caller))).toEqual([likedMe.id]);
  });

  it("leaves out matches in either order, unmatched ones too", async () => {
    const spot = newSpot();
    const caller = await member(spot);
    const [a, b, control] = await Promise.all([member(spot), member(spot), member(spot)]);
    const now = new Date();
    const pair = (x: string, y: string) => (x < y ? { userLow: x, userHigh: y } : { userLow: y, userHigh: x });
    await db()
      .insert(matches)
      .values([
        { id: `mat_${a.id}`, ...pair(caller.id, a.id), createdAt: now },
        { id: `mat_${b.id}`, ...pair(caller.id, b.id), createdAt: now, unmatchedAt: now, unmatchedBy: caller.id },
      ]);
    expect(idsOf(await feed(caller))).toEqual([control.id]);
  });

  it("leaves out blocks in either direction", async () => {
    const spot = newSpot();
    const caller = await member(spot);
    const [iBlocked, blockedMe, control] = await Promise.all([member(spot), member(spot), member(spot)]);
    const now = new Date();
    await db()
      .insert(blocks)
      .values([
        { blockerId: caller.id, blockedId: iBlocked.id, createdAt: now },
        { blockerId: blockedMe.id, blockedId: caller.id, createdAt: now },
      ]);
    expect(idsOf(await feed(caller))).toEqual([control.id]);
  });

  it("leaves out reports in either direction, even with no block (one lifted after the report)", async () => {
    const spot = newSpot();
    const caller = await member(spot, { interests: ["hiking"] });
    // The control ranks first, so reported people left in the candidates would show as a second page.
    const [iReported, reportedMe, control] = await Promise.all([member(spot), member(spot), member(spot, { interests: ["hiking"] })]);
    const now = new Date();
    await db()
      .insert(reports)
      .values([
        { id: `rep_${iReported.id}`, reporterId: caller.id, reportedId: iReported.id, reason: "spam", createdAt: now },
        { id: `rep_${reportedMe.id}`, reporterId: reportedMe.id, reportedId: caller.id, reason: "harassment", createdAt: now },
      ]);
    // Left out of the candidates themselves, not only of the page: one card and no second page.
    const page = await feed(caller, "?limit=1");
    expect(idsOf(page)).toEqual([control.id]);
    expect(page.nextCursor).toBeNull();
  });
});

describe("ranking", () => {
  it("puts a better mutual fit above a worse one", async () => {
    const spot = newSpot();
    const caller = await member(spot, { gender: "man", interestedIn: ["woman"], age: 30, ageMin: 25, ageMax: 35, maxDistanceKm: 100, interests: ["hiking", "jazz", "cooking"] });
    // Far, at the edge of my age range, no shared interests, and I am at the edge of theirs.
    const worse = await member(spot, {
      name: "worse",
      gender: "woman",
      interestedIn: ["man"],
      age: 35,
      ageMin: 30,
      ageMax: 50,
      maxDistanceKm: 100,
      interests: ["gaming"],
      longitude: east(spot, 90),
    });
    // Near, the middle of my range, the same interests, and I am the middle of theirs.
    const better = await member(spot, {
      name: "better",
      gender: "woman",
      interestedIn: ["man"],
      age: 30,
      ageMin: 25,
      ageMax: 35,
      maxDistanceKm: 100,
      interests: ["hiking", "jazz", "cooking"],
      longitude: east(spot, 3),
    });
    const page = await feed(caller);
    expect(idsOf(page)).toEqual([better.id, worse.id]);
  });

  it("a one-sided fit ranks below a balanced one", async () => {
    const spot = newSpot();
    const caller = await member(spot, { age: 30, ageMin: 25, ageMax: 35, interests: ["chess"] });
    // Perfect for me, but I am at the very edge of what they want.
    const oneSided = await member(spot, { age: 30, ageMin: 30, ageMax: 60, interests: ["chess"] });
    const balanced = await member(spot, { age: 30, ageMin: 25, ageMax: 35, interests: ["chess"] });
    expect(idsOf(await feed(caller))).toEqual([balanced.id, oneSided.id]);
  });
});

describe("impressions", () => {
  // The app's today, frozen: on the real clock, a test running across midnight UTC read one day
  // and had the app count in the next.
  const clock = fixedClock(Date.now());
  let realTime: TestApp;
  beforeAll(() => {
    realTime = t;
    t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock });
  });
  afterAll(() => {
    t = realTime;
  });

  it("counts one impression per card served, and skips profiles at today's cap", async () => {
    const spot = newSpot();
    const caller = await member(spot);
    const [capped, fresh] = await Promise.all([member(spot), member(spot)]);
    const day = utcDay(clock.now());
    await db().insert(profileImpressions).values({ userId: capped.id, day, count: DISCOVERY_DEFAULTS.dailyImpressionCap });
    expect(idsOf(await feed(caller))).toEqual([fresh.id]);
    const second = await member(spot);
    expect(new Set(idsOf(await feed(second)))).toEqual(new Set([caller.id, fresh.id]));
    const rows = await queryRows<{ user_id: string; count: number }>(
      db(),
      sql`select user_id, count from profile_impressions where day = ${day}::date and user_id in (${caller.id}, ${fresh.id}, ${capped.id})`,
    );
    const counts = Object.fromEntries(rows.map((r) => [r.user_id, r.count]));
    expect(counts).toEqual({ [fresh.id]: 2, [caller.id]: 1, [capped.id]: DISCOVERY_DEFAULTS.dailyImpressionCap });
  });

  it("counts a profile once per viewer and day, however often that viewer reopens the feed, even all at once", async () => {
    const spot = newSpot();
    const [caller, other] = await Promise.all([member(spot), member(spot)]);
    const shown = await member(spot);
    const day = utcDay(clock.now());
    const countOf = async () =>
      (await queryRows<{ count: number }>(db(), sql`select count from profile_impressions where day = ${day}::date and user_id = ${shown.id}`))[0]?.count;
    for (let i = 0; i < 3; i++) expect(idsOf(await feed(caller))).toContain(shown.id);
    const pages = await Promise.all(Array.from({ length: 6 }, () => feed(caller)));
    for (const page of pages) expect(idsOf(page)).toContain(shown.id);
    expect(await countOf()).toBe(1);
    expect(idsOf(await feed(other))).toContain(shown.id);
    expect(await countOf()).toBe(2);
  });

  it("one viewer replaying their feed cannot spend someone's cap and hide them from others", async () => {
    const spot = newSpot();
    const cap = DISCOVERY_DEFAULTS.dailyImpressionCap;
    const [replayer, shown] = await Promise.all([member(spot), member(spot)]);
    const day = utcDay(clock.now());
    await db().insert(profileImpressions).values({ userId: shown.id, day, count: cap - 2 });
    for (let i = 0; i < 5; i++) expect(idsOf(await feed(replayer))).toContain(shown.id);
    const later = await member(spot);
    expect(idsOf(await feed(later))).toContain(shown.id);
    // That was the cap's last impression: the next viewer no longer gets the profile.
    const last = await member(spot);
    expect(idsOf(await feed(last))).not.toContain(shown.id);
  });

  it("a profile served up to the cap is listed as capped and leaves the next feeds' snapshots", async () => {
    const spot = newSpot();
    const cap = DISCOVERY_DEFAULTS.dailyImpressionCap;
    // Shared interests rank the capped profile last for `later`, where a capped id left in the
    // snapshot would cost a page of its own.
    const shared = { interests: ["hiking", "jazz"] };
    const [first, nearlyCapped, fresh] = await Promise.all([member(spot, shared), member(spot, { interests: [] }), member(spot, shared)]);
    const day = utcDay(clock.now());
    await db().insert(profileImpressions).values({ userId: nearlyCapped.id, day, count: cap - 1 });
    // This feed serves the last impression nearlyCapped may have today.
    expect(new Set(idsOf(await feed(first)))).toEqual(new Set([nearlyCapped.id, fresh.id]));
    const listed = await queryRows<{ user_id: string }>(db(), sql`select user_id from profile_impressions_capped where day = ${day}::date and user_id in (${nearlyCapped.id}, ${fresh.id}, ${first.id})`);
    expect(listed.map((r) => r.user_id)).toEqual([nearlyCapped.id]);
    const later = await member(spot, shared);
    let pages = 1;
    const seen = await walk(later, 1, async () => {
      pages++;
    });
    expect(new Set(seen)).toEqual(new Set([first.id, fresh.id]));
    expect(pages).toBe(2);
  });
});

describe("paging", () => {
  it("walks every page with limit=3 without a repeat", async () => {
    const spot = newSpot();
    const caller = await member(spot);
    const others = await Promise.all(Array.from({ length: 10 }, () => member(spot)));
    const seen = await walk(caller, 3);
    expect(seen).toHaveLength(10);
    expect(new Set(seen)).toEqual(new Set(others.map((o) => o.id)));
  });

  it("someone swiped or blocked between pages does not appear on a later page", async () => {
    const spot = newSpot();
    const caller = await member(spot);
    const others = await Promise.all(Array.from({ length: 10 }, () => member(spot)));
    let swiped = "";
    let blocked = "";
    const seen = await walk(caller, 3, async (n, sofar) => {
      if (n !== 0) return;
      const rest = others.map((o) => o.id).filter((id) => !sofar.includes(id));
      swiped = rest[0] as string;
      blocked = rest[rest.length - 1] as string;
      const now = new Date();
      await db().insert(swipes).values({ swiperId: caller.id, targetId: swiped, action: "pass", createdAt: now });
      await db().insert(blocks).values({ blockerId: blocked, blockedId: caller.id, createdAt: now });
    });
    expect(seen).toHaveLength(8);
    expect(new Set(seen).size).toBe(8);
    expect(seen).not.toContain(swiped);
    expect(seen).not.toContain(blocked);
  });

  it("someone whose wishes or place stop fitting between pages, or who is reported, drops out of later pages", async () => {
    const spot = newSpot();
    // A 30-year-old man looking for women, 100 km; everyone else a woman who wants him.
    const caller = await member(spot, { gender: "man", interestedIn: ["woman"], age: 30 });
    const others = await Promise.all(Array.from({ length: 12 }, () => member(spot, { gender: "woman", interestedIn: ["man"], longitude: east(spot, 10) })));
    const changed: string[] = [];
    const seen = await walk(caller, 3, async (n, sofar) => {
      if (n !== 0) return;
      const [noLongerMen, tooOld, moved, shorterReach, nowAMan, reported] = others.map((o) => o.id).filter((id) => !sofar.includes(id));
      changed.push(...([noLongerMen, tooOld, moved, shorterReach, nowAMan, reported] as string[]));
      const set = (id: string | undefined, values: Partial<typeof profiles.$inferInsert>) => db().update(profiles).set(values).where(sql`user_id = ${id as string}`);
      await set(noLongerMen, { interestedIn: ["woman"] });
      await set(tooOld, { ageMin: 35 });
      await set(moved, { longitude: east(spot, 300) });
      await set(shorterReach, { maxDistanceKm: 5 });
      await set(nowAMan, { gender: "man" });
      await db().insert(reports).values({ id: `rep_${reported}`, reporterId: reported as string, reportedId: caller.id, reason: "spam", createdAt: new Date() });
    });
    expect(changed).toHaveLength(6);
    expect(seen).toHaveLength(6);
    for (const id of changed) expect(seen).not.toContain(id);
  });

  it("a viewer who hides their profile mid-session gets no further cards, and none is counted", async () => {
    const spot = newSpot();
    const caller = await member(spot);
    const others = await Promise.all(Array.from({ length: 6 }, () => member(spot)));
    const first = await feed(caller, "?limit=2");
    expect(first.nextCursor).not.toBeNull();
    await db().update(profiles).set({ visibility: "hidden" }).where(sql`user_id = ${caller.id}`);
    const second = await feed(caller, `?limit=2&cursor=${encodeURIComponent(first.nextCursor as string)}`);
    expect(second).toEqual({ profiles: [], nextCursor: null });
    const counted = await queryRows<{ n: number }>(db(), sql`select coalesce(sum(count), 0)::int as n from profile_impressions where user_id in (${sql.join(others.map((o) => sql`${o.id}`), sql`, `)})`);
    expect(counted[0]?.n).toBe(2);
  });

  it("later pages measure distances from where the session started, even after the viewer moves", async () => {
    const spot = newSpot();
    const caller = await member(spot);
    await Promise.all(Array.from({ length: 4 }, () => member(spot, { longitude: east(spot, 10) })));
    const first = await feed(caller, "?limit=2");
    expect(first.profiles.map((c) => c.distanceKm)).toEqual([10, 10]);
    await db().update(profiles).set({ longitude: east(spot, 200) }).where(sql`user_id = ${caller.id}`);
    const second = await feed(caller, `?limit=2&cursor=${encodeURIComponent(first.nextCursor as string)}`);
    expect(second.profiles.map((c) => c.distanceKm)).toEqual([10, 10]);
    // A new session starts from the new position, where nobody is within reach any more.
    expect(idsOf(await feed(caller))).toEqual([]);
  });

  it("rejects a malformed cursor, and another person's cursor, with 400", async () => {
    const spot = newSpot();
    const caller = await member(spot);
    await Promise.all(Array.from({ length: 3 }, () => member(spot)));
    const page = await feed(caller, "?limit=1");
    expect(page.nextCursor).not.toBeNull();
    const stranger = await member(newSpot());
    for (const [who, cursor] of [
      [caller, "not-a-cursor"],
      [caller, btoa("v1.short.1")],
      [stranger, page.nextCursor as string],
    ] as const) {
      const res = await t.request(`/api/v1/profiles/discover?cursor=${encodeURIComponent(cursor)}`, { headers: who.headers });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: "invalid_input", code: 400 });
    }
  });

  it("rejects a limit outside 1–50 with 400", async () => {
    const caller = await member(newSpot());
    for (const limit of ["0", "51", "x"]) {
      const res = await t.request(`/api/v1/profiles/discover?limit=${limit}`, { headers: caller.headers });
      expect(res.status).toBe(400);
    }
  });
});

describe("no profile", () => {
  it("answers 404 not_found 'create your profile first'", async () => {
    const caller = await signIn(t, env.issuer);
    const res = await t.request("/api/v1/profiles/discover", { headers: caller.headers });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: "not_found", message: "create your profile first" });
  });
});
