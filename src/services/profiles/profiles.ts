import { and, eq, or, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Principal } from "../../auth/principal";
import { PG, pgError } from "../../db/errors";
import type { Db } from "../../db/port";
import { profiles, users } from "../../db/schema";
import { ApiError, type FieldIssue } from "../../errors";
import type { KeyValueStore } from "../../kv/port";
import type { Logger } from "../../platform/logger";
import { noteProfileChange } from "../ai/context-cache";
import { noSuchMember, visibleTo } from "../safety/visibility";
import { ageOn, toCard, type ProfileCard } from "./card";

export const GENDERS = ["woman", "man", "nonbinary", "other"] as const;
export const VISIBILITIES = ["visible", "hidden"] as const;
export const MIN_AGE = 18;
export const MAX_AGE = 120;
export const MAX_INTERESTS = 10;
export const MAX_PHOTOS = 6;

/** ISO 3166-1 alpha-2: the 249 officially assigned codes (no user-assigned or reserved ones). */
const ISO_COUNTRIES = new Set(
  (
    "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
    "CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR " +
    "GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP " +
    "KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT " +
    "MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW " +
    "SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG " +
    "UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW"
  ).split(" "),
);

export function isCountryCode(value: string): boolean {
  return ISO_COUNTRIES.has(value.toUpperCase());
}

/**
 * What `PUT /api/v1/profile` accepts, already shape-checked by the route's schema: any subset of the
 * fields. Rules that depend on the stored profile or on today's date (adults only, ageMin ≤ ageMax, a
 * position needs both coordinates) are checked by `updateProfile`.
 */
export interface ProfileInputBody {
  displayName?: string;
  birthDate?: string;
  gender?: (typeof GENDERS)[number];
  interestedIn?: (typeof GENDERS)[number][];
  ageMin?: number;
  ageMax?: number;
  maxDistanceKm?: number;
  bio?: string | null;
  tagline?: string | null;
  interests?: string[];
  photos?: string[];
  languages?: string[];
  latitude?: number | null;
  longitude?: number | null;
  city?: string | null;
  country?: string | null;
  visibility?: (typeof VISIBILITIES)[number];
}

/** The owner's view: everything, including the birth date and exact position. */
export interface OwnProfile {
  userId: string;
  displayName: string;
  birthDate: string;
  age: number;
  gender: string;
  interestedIn: string[];
  ageMin: number;
  ageMax: number;
  maxDistanceKm: number;
  bio: string | null;
  tagline: string | null;
  interests: string[];
  photos: string[];
  languages: string[];
  latitude: number | null;
  longitude: number | null;
  city: string | null;
  country: string | null;
  visibility: string;
  createdAt: string;
  updatedAt: string;
  lastActiveAt: string;
}

type Row = typeof profiles.$inferSelect;

const REQUIRED_ON_CREATE = ["displayName", "birthDate", "gender", "interestedIn"] as const;

function own(row: Row, now: number): OwnProfile {
  return {
    userId: row.userId,
    displayName: row.displayName,
    birthDate: row.birthDate,
    age: ageOn(row.birthDate, now),
    gender: row.gender,
    interestedIn: row.interestedIn,
    ageMin: row.ageMin,
    ageMax: row.ageMax,
    maxDistanceKm: row.maxDistanceKm,
    bio: row.bio,
    tagline: row.tagline,
    interests: row.interests,
    photos: row.photos,
    languages: row.languages,
    latitude: row.latitude,
    longitude: row.longitude,
    city: row.city,
    country: row.country,
    visibility: row.visibility,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    lastActiveAt: row.lastActiveAt.toISOString(),
  };
}

const unique = <T,>(values: T[]): T[] => [...new Set(values)];

/** Trims, lower-cases and de-duplicates lists, upper-cases the country: the stored form. */
/**
 * Positions are kept on a 0.01° grid (about 1 km; migration 0019). Distances shown to others are
 * rounded, but measured from a stored exact point they still changed at exact places: a member
 * moving their own position step by step could find where "5 km" turns into "10 km" around
 * someone and work out that person's point to the metre. From a grid point, all such a search
 * finds is the grid point.
 */
export function onGrid(degrees: number): number {
  return Math.round(degrees * 100) / 100;
}

function normalise(input: ProfileInputBody): ProfileInputBody {
  const out: ProfileInputBody = { ...input };
  if (input.interestedIn) out.interestedIn = unique(input.interestedIn);
  if (input.interests) out.interests = unique(input.interests.map((i) => i.trim().toLowerCase()));
  if (input.photos) out.photos = unique(input.photos);
  if (input.languages) out.languages = unique(input.languages.map((l) => l.toLowerCase()));
  if (typeof input.country === "string") out.country = input.country.toUpperCase();
  if (typeof input.latitude === "number") out.latitude = onGrid(input.latitude);
  if (typeof input.longitude === "number") out.longitude = onGrid(input.longitude);
  return out;
}

function todayIso(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** Rules across fields, or against the stored profile and today's date. */
function crossFieldIssues(
  input: ProfileInputBody,
  merged: { ageMin: number; ageMax: number; latitude: number | null; longitude: number | null },
  now: number,
): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (input.birthDate !== undefined) {
    if (input.birthDate > todayIso(now)) issues.push({ path: "birthDate", message: "must not be in the future" });
    else if (ageOn(input.birthDate, now) < MIN_AGE) issues.push({ path: "birthDate", message: `members must be at least ${MIN_AGE} years old` });
    else if (ageOn(input.birthDate, now) > MAX_AGE) issues.push({ path: "birthDate", message: `an age above ${MAX_AGE} is not plausible` });
  }
  if (merged.ageMin > merged.ageMax) {
    issues.push({ path: input.ageMin !== undefined ? "ageMin" : "ageMax", message: `ageMin (${merged.ageMin}) must not exceed ageMax (${merged.ageMax})` });
  }
  if ((merged.latitude === null) !== (merged.longitude === null)) {
    issues.push({ path: merged.latitude === null ? "latitude" : "longitude", message: "latitude and longitude are set (or cleared) together" });
  }
  return issues;
}

export interface ProfileContext {
  db: Db;
  now: number;
}

/** Saving also tells the AI context cache, which keeps a copy of the profile. */
export interface ProfileWriteContext extends ProfileContext {
  kv: KeyValueStore;
  /** Read after the commit: the AI cache's stamp must not predate the save. */
  clock: () => number;
  logger: Logger;
  requestId?: string;
}

export async function getOwnProfile(ctx: ProfileContext, actor: Principal): Promise<OwnProfile> {
  const [row] = await ctx.db.select().from(profiles).where(eq(profiles.userId, actor.userId)).limit(1);
  if (!row) throw new ApiError("not_found", "no profile yet");
  return own(row, ctx.now);
}

/**
 * Creates the caller's profile on the first call (display name, birth date, gender and who they
 * want to meet are then required) and afterwards changes only the fields sent. Only ever writes
 * the caller's own profile. Keeps `users.display_name` (leaderboards) in step, and marks the AI
 * context cache's copy of the profile as older than the save.
 */
export async function updateProfile(ctx: ProfileWriteContext, actor: Principal, body: ProfileInputBody): Promise<{ created: boolean; profile: OwnProfile }> {
  const saved = await saveProfile(ctx, actor, body);
  // After the commit, so any AI context read before it counts as older than the save. A failure
  // only delays the cache's refresh until its TTL, so the save still succeeds.
  await noteProfileChange(ctx.kv, actor.userId, ctx.clock()).catch((err: unknown) =>
    ctx.logger.warn("profile change not noted for the AI context cache", { requestId: ctx.requestId, err: String(err) }),
  );
  return saved;
}

async function saveProfile(ctx: ProfileContext, actor: Principal, body: ProfileInputBody): Promise<{ created: boolean; profile: OwnProfile }> {
  const input = normalise(body);
  const at = new Date(ctx.now);
  try {
    return await ctx.db.transaction(async (tx) => {
      // Serialises profile writes of one person, including two concurrent first PUTs.
      await tx.execute(sql`select 1 from users where id = ${actor.userId} for update`);
      const [existing] = await tx.select().from(profiles).where(eq(profiles.userId, actor.userId)).limit(1);

      if (!existing) {
        const missing = REQUIRED_ON_CREATE.filter((f) => input[f] === undefined);
        if (missing.length > 0) {
          throw new ApiError("invalid_input", `a new profile needs ${missing.join(", ")}`, {
            details: missing.map((f) => ({ path: f, message: "required when creating a profile" })),
          });
        }
      }
      const merged = {
        ageMin: input.ageMin ?? existing?.ageMin ?? MIN_AGE,
        ageMax: input.ageMax ?? existing?.ageMax ?? 99,
        latitude: input.latitude !== undefined ? input.latitude : (existing?.latitude ?? null),
        longitude: input.longitude !== undefined ? input.longitude : (existing?.longitude ?? null),
      };
      // The default ageMax (99) must not make a lone ageMin above 99 fail on creation.
      if (!existing && input.ageMax === undefined && merged.ageMin > merged.ageMax) merged.ageMax = MAX_AGE;
      const issues = crossFieldIssues(input, merged, ctx.now);
      if (issues.length > 0) throw new ApiError("invalid_input", "invalid profile", { details: issues });

      const fields = { ...input, ageMin: merged.ageMin, ageMax: merged.ageMax, updatedAt: at, lastActiveAt: at };
      let row: Row | undefined;
      if (!existing) {
        [row] = await tx
          .insert(profiles)
          .values({
            ...fields,
            userId: actor.userId,
            displayName: input.displayName as string,
            birthDate: input.birthDate as string,
            gender: input.gender as string,
            interestedIn: input.interestedIn as string[],
            createdAt: at,
          })
          .returning();
      } else {
        [row] = await tx.update(profiles).set(fields).where(eq(profiles.userId, actor.userId)).returning();
      }
      if (!row) throw new Error("profile write returned no row");
      if (input.displayName !== undefined && input.displayName !== existing?.displayName) {
        await tx.update(users).set({ displayName: input.displayName }).where(eq(users.id, actor.userId));
      }
      return { created: !existing, profile: own(row, ctx.now) };
    });
  } catch (err) {
    // The schema's checks back the rules above; should one still refuse, it is the caller's input.
    if (pgError(err).code === PG.checkViolation) throw new ApiError("invalid_input", "invalid profile", { details: [{ path: "(body)", message: pgError(err).constraint ?? "check failed" }] });
    throw err;
  }
}

/**
 * Another person's card: an age instead of the birth date, a city and a rounded distance instead
 * of a position, never an email. Hidden profiles, a block in either direction, an unknown user
 * and a user without a profile all answer the same 404 (safety/visibility.ts), so none of them can
 * be told apart.
 */
export async function getCard(ctx: ProfileContext, viewer: Principal, targetId: string): Promise<ProfileCard> {
  const v = alias(profiles, "viewer_profile");
  const [hit] = await ctx.db
    .select({ profile: profiles, viewerLatitude: v.latitude, viewerLongitude: v.longitude })
    .from(profiles)
    .leftJoin(v, eq(v.userId, viewer.userId))
    .where(
      and(
        eq(profiles.userId, targetId),
        or(eq(profiles.userId, viewer.userId), visibleTo(viewer.userId, sql`${profiles.userId}`)),
      ),
    )
    .limit(1);
  if (!hit) throw noSuchMember("profile");
  return toCard(hit.profile, { latitude: hit.viewerLatitude, longitude: hit.viewerLongitude }, ctx.now);
}
