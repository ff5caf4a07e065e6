import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "../../src/db/rows";
import { fixedClock } from "../../src/platform/clock";
import { distanceKm, roundedDistance } from "../../src/services/profiles/card";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, signIn, type Person } from "../support/people";
import { expectError } from "../support/errors";

const env = useTestEnvironment();

/** An app on a clock the test can move; every caller on the enterprise tier. */
function app(): { t: TestApp; clock: ReturnType<typeof fixedClock> } {
  const clock = fixedClock(Date.now());
  return { t: buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock }), clock };
}

/** The UTC date `years` years before the clock's today, moved by `days`, as YYYY-MM-DD. */
function birthDate(now: number, years: number, days = 0): string {
  const today = new Date(now);
  const year = today.getUTCFullYear() - years;
  // On 29 February, the 28th of a year without one: Date.UTC would roll over to 1 March, and
  // someone born then is not yet `years` old (the test of 18 failed on that day).
  const day = Math.min(today.getUTCDate(), new Date(Date.UTC(year, today.getUTCMonth() + 1, 0)).getUTCDate());
  return new Date(Date.UTC(year, today.getUTCMonth(), day + days)).toISOString().slice(0, 10);
}

const put = (t: TestApp, who: Person, body: unknown) =>
  t.request("/api/v1/profile", { method: "PUT", headers: { ...who.headers, "content-type": "application/json" }, body: JSON.stringify(body) });
const getOwn = (t: TestApp, who: Person) => t.request("/api/v1/profile", { headers: who.headers });
const getCard = (t: TestApp, who: Person, userId: string) => t.request(`/api/v1/profile/${userId}`, { headers: who.headers });

const NAIROBI = { latitude: -1.286389, longitude: 36.817223 };
// About 12 km north-east of the point above.
const KIAMBU = { latitude: -1.1714, longitude: 36.8356 };

function fullProfile(now: number, extra: Record<string, unknown> = {}) {
  return {
    displayName: "Amani",
    birthDate: birthDate(now, 29, -40),
    gender: "woman",
    interestedIn: ["man", "nonbinary"],
    ageMin: 25,
    ageMax: 40,
    maxDistanceKm: 50,
    bio: "Runner, reader and weekend hiker.",
    tagline: "Coffee first",
    interests: ["  Hiking ", "books", "HIKING", "Jazz"],
    photos: ["https://cdn.example.com/p/1.jpg", "https://cdn.example.com/p/2.jpg"],
    languages: ["en", "SW"],
    ...NAIROBI,
    city: "Nairobi",
    country: "ke",
    visibility: "visible",
    ...extra,
  };
}

async function withProfile(t: TestApp, now: number, extra: Record<string, unknown> = {}): Promise<Person & { profile: Record<string, unknown> }> {
  const p = await signIn(t, env.issuer);
  const res = await put(t, p, fullProfile(now, extra));
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return { ...p, profile: JSON.parse(text) as Record<string, unknown> };
}

async function userDisplayName(userId: string): Promise<string | null> {
  const [row] = await queryRows<{ display_name: string | null }>(env.db.database.db, sql`select display_name from users where id = ${userId}`);
  return row?.display_name ?? null;
}

describe("own profile", () => {
  it("answers 404 'no profile yet' before the first PUT", async () => {
    const { t } = app();
    const p = await signIn(t, env.issuer);
    const body = await expectError(await getOwn(t, p), 404, "not_found");
    expect(body.message).toBe("no profile yet");
  });

  it("needs displayName, birthDate, gender and interestedIn on the first PUT, naming the missing ones", async () => {
    const { t } = app();
    const p = await signIn(t, env.issuer);
    const body = await expectError(await put(t, p, { bio: "Hello there, world" }), 400, "invalid_input");
    expect(body.details?.map((d) => d.path).sort()).toEqual(["birthDate", "displayName", "gender", "interestedIn"]);
    const partial = await expectError(await put(t, p, { displayName: "Zed", gender: "man" }), 400, "invalid_input");
    expect(partial.details?.map((d) => d.path).sort()).toEqual(["birthDate", "interestedIn"]);
    await expectError(await getOwn(t, p), 404, "not_found");
  });

  it("creates the profile (201) in full, normalised, and keeps users.display_name in step", async () => {
    const { t, clock } = app();
    const p = await signIn(t, env.issuer);
    const input = fullProfile(clock.now());
    const res = await put(t, p, input);
    expect(res.status, await res.clone().text()).toBe(201);
    const created = (await res.json()) as Record<string, unknown>;
    const at = new Date(clock.now()).toISOString();
    expect(created).toEqual({
      userId: p.id,
      displayName: "Amani",
      birthDate: input.birthDate,
      age: 29,
      gender: "woman",
      interestedIn: ["man", "nonbinary"],
      ageMin: 25,
      ageMax: 40,
      maxDistanceKm: 50,
      bio: "Runner, reader and weekend hiker.",
      tagline: "Coffee first",
      interests: ["hiking", "books", "jazz"],
      photos: ["https://cdn.example.com/p/1.jpg", "https://cdn.example.com/p/2.jpg"],
      languages: ["en", "sw"],
      // Kept on the 0.01° grid, not as sent (-1.286389, 36.817223).
      latitude: -1.29,
      longitude: 36.82,
      city: "Nairobi",
      country: "KE",
      visibility: "visible",
      createdAt: at,
      updatedAt: at,
      lastActiveAt: at,
    });
    const own = await getOwn(t, p);
    expect(own.status).toBe(200);
    expect(await own.json()).toEqual(created);
    expect(await userDisplayName(p.id)).toBe("Amani");
  });

  it("creates with only the required fields, filling defaults", async () => {
    const { t, clock } = app();
    const p = await signIn(t, env.issuer);
    const res = await put(t, p, { displayName: "Kofi", birthDate: birthDate(clock.now(), 30), gender: "man", interestedIn: ["woman"] });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({
      age: 30,
      ageMin: 18,
      ageMax: 99,
      maxDistanceKm: 100,
      bio: null,
      tagline: null,
      interests: [],
      photos: [],
      languages: [],
      latitude: null,
      longitude: null,
      city: null,
      country: null,
      visibility: "visible",
    });
  });

  it("later PUTs take any subset: other fields keep their value, updatedAt and lastActiveAt move", async () => {
    const { t, clock } = app();
    const p = await withProfile(t, clock.now());
    clock.advance(60_000);
    const res = await put(t, p, { displayName: "Amani W.", bio: "A brand new bio text." });
    expect(res.status, await res.clone().text()).toBe(200);
    const updated = (await res.json()) as Record<string, unknown>;
    const at = new Date(clock.now()).toISOString();
    expect(updated).toEqual({ ...p.profile, displayName: "Amani W.", bio: "A brand new bio text.", updatedAt: at, lastActiveAt: at });
    expect(updated.createdAt).toBe(p.profile.createdAt);
    expect(await userDisplayName(p.id)).toBe("Amani W.");

    // An empty body changes nothing but the activity stamps; null clears optional fields.
    clock.advance(1_000);
    const touched = (await (await put(t, p, {})).json()) as Record<string, unknown>;
    expect(touched).toMatchObject({ displayName: "Amani W.", bio: "A brand new bio text.", lastActiveAt: new Date(clock.now()).toISOString() });
    const cleared = (await (await put(t, p, { bio: null, tagline: null, latitude: null, longitude: null })).json()) as Record<string, unknown>;
    expect(cleared).toMatchObject({ bio: null, tagline: null, latitude: null, longitude: null, city: "Nairobi" });
  });

  it("accepts someone who turns 18 today, refuses someone who turns 18 tomorrow", async () => {
    const { t, clock } = app();
    const adult = await signIn(t, env.issuer);
    const ok = await put(t, adult, { displayName: "Eighteen", birthDate: birthDate(clock.now(), 18), gender: "other", interestedIn: ["other"] });
    expect(ok.status, await ok.clone().text()).toBe(201);
    expect(((await ok.json()) as { age: number }).age).toBe(18);

    const minor = await signIn(t, env.issuer);
    const body = await expectError(
      await put(t, minor, { displayName: "Almost", birthDate: birthDate(clock.now(), 18, 1), gender: "other", interestedIn: ["other"] }),
      400,
      "invalid_input",
    );
    expect(body.details).toEqual([{ path: "birthDate", message: expect.stringContaining("18") }]);
    await expectError(await getOwn(t, minor), 404, "not_found");

    // An existing member cannot make themselves a minor either.
    const changed = await expectError(await put(t, adult, { birthDate: birthDate(clock.now(), 12) }), 400, "invalid_input");
    expect(changed.details?.map((d) => d.path)).toEqual(["birthDate"]);
  });

  const now = Date.now();
  it.each<[string, Record<string, unknown>, string]>([
    ["a birth date in the future", { birthDate: birthDate(now, -1) }, "birthDate"],
    ["an impossible date", { birthDate: "1990-02-30" }, "birthDate"],
    ["a birth date in another format", { birthDate: "17/05/1994" }, "birthDate"],
    ["an age above 120", { birthDate: "1890-01-01" }, "birthDate"],
    ["an empty display name", { displayName: "   " }, "displayName"],
    ["a display name over 50 characters", { displayName: "x".repeat(51) }, "displayName"],
    ["an unknown gender", { gender: "robot" }, "gender"],
    ["an empty interestedIn", { interestedIn: [] }, "interestedIn"],
    ["an unknown interestedIn value", { interestedIn: ["aliens"] }, "interestedIn.0"],
    ["a bio under 10 characters", { bio: "too short" }, "bio"],
    ["a bio over 500 characters", { bio: "x".repeat(501) }, "bio"],
    ["a tagline over 100 characters", { tagline: "x".repeat(101) }, "tagline"],
    ["11 interests", { interests: Array.from({ length: 11 }, (_, i) => `interest ${i}`) }, "interests"],
    ["an empty interest", { interests: ["books", "  "] }, "interests.1"],
    ["7 photos", { photos: Array.from({ length: 7 }, (_, i) => `https://cdn.example.com/${i}.jpg`) }, "photos"],
    ["an http photo URL", { photos: ["http://cdn.example.com/1.jpg"] }, "photos.0"],
    ["a photo that is not a URL", { photos: ["not a url"] }, "photos.0"],
    ["a javascript: photo URL", { photos: ["javascript:alert(1)"] }, "photos.0"],
    ["a malformed language", { languages: ["english!"] }, "languages.0"],
    ["ageMin under 18", { ageMin: 17 }, "ageMin"],
    ["ageMax over 120", { ageMax: 121 }, "ageMax"],
    ["a fractional ageMin", { ageMin: 20.5 }, "ageMin"],
    ["ageMin above ageMax in one request", { ageMin: 40, ageMax: 30 }, "ageMin"],
    ["ageMin above the stored ageMax", { ageMin: 41 }, "ageMin"],
    ["ageMax below the stored ageMin", { ageMax: 24 }, "ageMax"],
    ["maxDistanceKm 0", { maxDistanceKm: 0 }, "maxDistanceKm"],
    ["maxDistanceKm 501", { maxDistanceKm: 501 }, "maxDistanceKm"],
    ["latitude 91", { latitude: 91, longitude: 0 }, "latitude"],
    ["longitude -181", { latitude: 0, longitude: -181 }, "longitude"],
    ["a latitude given as text", { latitude: "10", longitude: 0 }, "latitude"],
    ["clearing only the latitude", { latitude: null }, "latitude"],
    ["an unassigned country code", { country: "XX" }, "country"],
    ["a three-letter country code", { country: "KEN" }, "country"],
    ["an unknown visibility", { visibility: "secret" }, "visibility"],
    ["an unknown field", { email: "someone@example.com" }, "(root)"],
    ["someone else's userId in the body", { userId: "usr_00000000000000000000000000" }, "(root)"],
  ])("answers 400 with details to %s, and changes nothing", async (_label, body, path) => {
    const { t, clock } = app();
    const p = await withProfile(t, clock.now());
    clock.advance(1_000);
    const err = await expectError(await put(t, p, body), 400, "invalid_input");
    expect(err.details?.map((d) => d.path), JSON.stringify(err)).toContain(path);
    expect(await (await getOwn(t, p)).json()).toEqual(p.profile);
  });

  it("answers 400 to a body that is not a JSON object", async () => {
    const { t } = app();
    const p = await signIn(t, env.issuer);
    for (const body of ["[]", '"text"', "{not json"]) {
      const res = await t.request("/api/v1/profile", { method: "PUT", headers: { ...p.headers, "content-type": "application/json" }, body });
      const err = await expectError(res, 400, "invalid_input");
      expect(err.details?.length, body).toBeGreaterThan(0);
    }
  });

  it("only ever writes the caller's own profile", async () => {
    const { t, clock } = app();
    const a = await withProfile(t, clock.now());
    const b = await signIn(t, env.issuer);
    clock.advance(1_000);
    const res = await put(t, b, fullProfile(clock.now(), { displayName: "Intruder" }));
    expect(res.status).toBe(201);
    expect(((await res.json()) as { userId: string }).userId).toBe(b.id);
    await expectError(await put(t, b, { userId: a.id, displayName: "Hijacked" }), 400, "invalid_input");
    expect(await (await getOwn(t, a)).json()).toEqual(a.profile);
    expect(await userDisplayName(a.id)).toBe("Amani");
  });
});

describe("another person's card", () => {
  it("shows age, city and a rounded distance, never email, birth date or exact position", async () => {
    const { t, clock } = app();
    const viewer = await withProfile(t, clock.now(), { displayName: "Viewer", ...KIAMBU });
    const target = await withProfile(t, clock.now(), { displayName: "Target", latitude: 1.234567, longitude: 34.987654, city: "Kitale" });
    const res = await getCard(t, viewer, target.id);
    const text = await res.text();
    expect(res.status, text).toBe(200);
    for (const secret of ["email", "birthDate", "latitude", "longitude", target.email, target.profile.birthDate as string, "1.234567", "34.987654", "ageMin", "visibility"]) {
      expect(text).not.toContain(secret);
    }
    const card = JSON.parse(text) as Record<string, unknown>;
    const expectedKm = roundedDistance(distanceKm(KIAMBU, { latitude: 1.234567, longitude: 34.987654 }));
    expect(card).toEqual({
      userId: target.id,
      displayName: "Target",
      age: 29,
      gender: "woman",
      tagline: "Coffee first",
      bio: "Runner, reader and weekend hiker.",
      interests: ["hiking", "books", "jazz"],
      photos: ["https://cdn.example.com/p/1.jpg", "https://cdn.example.com/p/2.jpg"],
      languages: ["en", "sw"],
      city: "Kitale",
      country: "KE",
      distanceKm: expectedKm,
      lastActiveAt: target.profile.lastActiveAt,
    });
    expect(expectedKm % 5).toBe(0);
    expect(expectedKm).toBeGreaterThan(300);
  });

  it("gives away no more than a grid cell, however a viewer moves their own position", async () => {
    const { t, clock } = app();
    // Two people a few hundred metres apart in one 0.01° cell.
    const a = await withProfile(t, clock.now(), { latitude: -1.318237, longitude: 36.851942 });
    const b = await withProfile(t, clock.now(), { latitude: -1.3151, longitude: 36.8461 });
    const rows = await queryRows<{ latitude: number; longitude: number }>(env.db.database.db, sql`select latitude, longitude from profiles where user_id in (${a.id}, ${b.id})`);
    expect(rows).toEqual([{ latitude: -1.32, longitude: 36.85 }, { latitude: -1.32, longitude: 36.85 }]);
    // A viewer walking across the 5 km and 10 km boundaries around them sees the two flip at the
    // very same places: nothing tells their true points apart.
    const viewer = await withProfile(t, clock.now(), NAIROBI);
    const seen = new Set<number>();
    for (let step = 0; step < 24; step++) {
      expect((await put(t, viewer, { latitude: -1.27 + step * 0.004, longitude: 36.9 })).status).toBe(200);
      const [da, db] = await Promise.all([a, b].map(async (p) => ((await (await getCard(t, viewer, p.id)).json()) as { distanceKm: number }).distanceKm));
      expect(da, `step ${step}`).toBe(db);
      seen.add(da as number);
    }
    expect(seen.size).toBeGreaterThan(1);
  });

  it("rounds short distances to 5 km, and to 1 km under 5 km", async () => {
    const { t, clock } = app();
    const viewer = await withProfile(t, clock.now(), NAIROBI);
    const near = await withProfile(t, clock.now(), KIAMBU);
    const next = await withProfile(t, clock.now(), { latitude: NAIROBI.latitude + 0.01, longitude: NAIROBI.longitude });
    expect(((await (await getCard(t, viewer, near.id)).json()) as { distanceKm: number }).distanceKm).toBe(roundedDistance(distanceKm(NAIROBI, KIAMBU)));
    expect(roundedDistance(distanceKm(NAIROBI, KIAMBU)) % 5).toBe(0);
    expect(((await (await getCard(t, viewer, next.id)).json()) as { distanceKm: number }).distanceKm).toBe(1);
  });

  it("gives no distance when the viewer has no profile or no position", async () => {
    const { t, clock } = app();
    const target = await withProfile(t, clock.now());
    const noProfile = await signIn(t, env.issuer);
    const res = await getCard(t, noProfile, target.id);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ userId: target.id, distanceKm: null, city: "Nairobi" });
  });

  it("answers 404 for a hidden profile, and 200 again once visible", async () => {
    const { t, clock } = app();
    const viewer = await withProfile(t, clock.now());
    const target = await withProfile(t, clock.now(), { visibility: "hidden" });
    const err = await expectError(await getCard(t, viewer, target.id), 404, "not_found");
    expect(await put(t, target, { visibility: "visible" }).then((r) => r.status)).toBe(200);
    expect((await getCard(t, viewer, target.id)).status).toBe(200);
    // Hidden, unknown and profile-less all answer the same way.
    await put(t, target, { visibility: "hidden" });
    const hidden = await expectError(await getCard(t, viewer, target.id), 404, "not_found");
    const unknown = await expectError(await getCard(t, viewer, "usr_00000000000000000000000000"), 404, "not_found");
    expect(hidden.message).toBe(unknown.message);
    expect(err.message).toBe(unknown.message);
    // The owner can still preview their own card.
    expect((await getCard(t, target, target.id)).status).toBe(200);
  });

  it("answers 404 for a user without a profile, and 400 to a malformed id", async () => {
    const { t, clock } = app();
    const viewer = await withProfile(t, clock.now());
    const bare = await signIn(t, env.issuer);
    await expectError(await getCard(t, viewer, bare.id), 404, "not_found");
    for (const bad of ["not-an-id", "usr_short", "wal_01j9zq3v5k8m2n4p6r8t0w2y4a", `usr_${"a".repeat(27)}`, "usr_01J9ZQ3V5K8M2N4P6R8T0W2Y4A", "%27%20or%201%3D1"]) {
      const err = await expectError(await getCard(t, viewer, bad), 400, "invalid_input");
      expect(err.details?.map((d) => d.path), bad).toEqual(["userId"]);
    }
  });

  it("answers 404 both ways once either person blocks the other", async () => {
    const { t, clock } = app();
    const a = await withProfile(t, clock.now());
    const b = await withProfile(t, clock.now());
    expect((await getCard(t, a, b.id)).status).toBe(200);
    expect((await getCard(t, b, a.id)).status).toBe(200);
    const blocked = await t.request("/api/v1/blocks", { method: "POST", headers: { ...b.headers, "content-type": "application/json" }, body: JSON.stringify({ userId: a.id }) });
    expect(blocked.status).toBe(201);
    await expectError(await getCard(t, a, b.id), 404, "not_found");
    await expectError(await getCard(t, b, a.id), 404, "not_found");
  });
});
