import { sql } from "drizzle-orm";

/** The fields a card shows exactly as they are stored. */
interface SharedProfileFields {
  userId: string;
  displayName: string;
  gender: string;
  tagline: string | null;
  bio: string | null;
  interests: string[];
  photos: string[];
  languages: string[];
  city: string | null;
  country: string | null;
}

/** What other people may see of a profile: an age instead of a birth date, a rounded distance
 * and a city instead of a position, and never an email. */
export interface ProfileCard extends SharedProfileFields {
  age: number;
  /** Kilometres, rounded to 5 km (1 km under 5 km); null when either side has no position. */
  distanceKm: number | null;
  lastActiveAt: string;
}

/** A stored profile, as much of it as a card is made from. */
export interface ProfileRow extends SharedProfileFields {
  birthDate: string;
  latitude: number | null;
  longitude: number | null;
  lastActiveAt: Date;
}

export function ageOn(birthDate: string, now: number): number {
  return agesOn(now)(birthDate);
}

/** ageOn for many birth dates on one day: the day is taken apart once, by the caller holding the result. */
export function agesOn(now: number): (birthDate: string) => number {
  const today = new Date(now);
  const year = today.getUTCFullYear();
  const monthDay = (today.getUTCMonth() + 1) * 100 + today.getUTCDate();
  return (birthDate) => {
    // YYYY-MM-DD, as Postgres prints a date.
    const y = Number(birthDate.slice(0, 4));
    const md = Number(birthDate.slice(5, 7)) * 100 + Number(birthDate.slice(8, 10));
    return year - y - (monthDay < md ? 1 : 0);
  };
}

/** The sphere every distance on the platform is measured on. */
export const EARTH_RADIUS_KM = 6371;

export function distanceKm(a: { latitude: number; longitude: number }, b: { latitude: number; longitude: number }): number {
  const rad = Math.PI / 180;
  const dLat = (b.latitude - a.latitude) * rad;
  const dLon = (b.longitude - a.longitude) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Rounding keeps anyone from trilaterating a person's exact position from repeated reads. */
export function roundedDistance(km: number): number {
  return km < 5 ? 1 : Math.round(km / 5) * 5;
}

export function toCard(row: ProfileRow, viewer: { latitude: number | null; longitude: number | null } | null, now: number): ProfileCard {
  const bothPlaced = viewer && viewer.latitude !== null && viewer.longitude !== null && row.latitude !== null && row.longitude !== null;
  return {
    userId: row.userId,
    displayName: row.displayName,
    age: ageOn(row.birthDate, now),
    gender: row.gender,
    tagline: row.tagline,
    bio: row.bio,
    interests: row.interests,
    photos: row.photos,
    languages: row.languages,
    city: row.city,
    country: row.country,
    distanceKm: bothPlaced
      ? roundedDistance(distanceKm({ latitude: viewer.latitude as number, longitude: viewer.longitude as number }, { latitude: row.latitude as number, longitude: row.longitude as number }))
      : null,
    lastActiveAt: row.lastActiveAt.toISOString(),
  };
}

/** The columns `cardFromRow` reads, from a `profiles` row aliased `p` (null when no profile joined). */
export const CARD_COLUMNS = sql`p.user_id as p_user_id, p.display_name, p.birth_date::text as birth_date, p.gender, p.tagline, p.bio,
  p.interests, p.photos, p.languages, p.city, p.country, p.latitude, p.longitude, p.last_active_at`;

/** A raw row selected with CARD_COLUMNS (a type, not an interface, so it fits raw row maps). */
export type CardColumns = {
  p_user_id: string | null;
  display_name: string | null;
  birth_date: string | null;
  gender: string | null;
  tagline: string | null;
  bio: string | null;
  interests: string[] | null;
  photos: string[] | null;
  languages: string[] | null;
  city: string | null;
  country: string | null;
  latitude: number | string | null;
  longitude: number | string | null;
  last_active_at: Date | string | null;
};

/** The card of a row selected with CARD_COLUMNS, or null when the row joined no profile. */
export function cardFromRow(row: CardColumns, viewer: { latitude: number | null; longitude: number | null } | null, now: number): ProfileCard | null {
  if (!row.p_user_id) return null;
  return toCard(
    {
      userId: row.p_user_id,
      displayName: row.display_name as string,
      birthDate: row.birth_date as string,
      gender: row.gender as string,
      tagline: row.tagline,
      bio: row.bio,
      interests: row.interests ?? [],
      photos: row.photos ?? [],
      languages: row.languages ?? [],
      city: row.city,
      country: row.country,
      latitude: row.latitude === null ? null : Number(row.latitude),
      longitude: row.longitude === null ? null : Number(row.longitude),
      lastActiveAt: new Date(row.last_active_at as string),
    },
    viewer,
    now,
  );
}
