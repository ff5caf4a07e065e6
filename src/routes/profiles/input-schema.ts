import { z } from "@hono/zod-openapi";
import { parseUrl } from "../../platform/url";
import { GENDERS, MAX_AGE, MAX_INTERESTS, MAX_PHOTOS, MIN_AGE, VISIBILITIES, isCountryCode } from "../../services/profiles/profiles";

const Gender = z.enum(GENDERS);
const HttpsUrl = z
  .string()
  .max(2048)
  .refine((value) => {
    const url = parseUrl(value);
    return url !== undefined && url.protocol === "https:" && url.hostname.length > 0 && url.username === "" && url.password === "";
  }, "an https URL");

/**
 * What `PUT /api/v1/profile` accepts: any subset of these fields (all are required on the first
 * PUT except the ones with defaults). Shapes and bounds are checked here; rules that depend on the
 * stored profile or on today's date are checked by `updateProfile`.
 */
export const ProfileInput = z
  .object({
    displayName: z.string().trim().min(1).max(50),
    birthDate: z.iso.date().openapi({ description: "YYYY-MM-DD; members must be 18 or older", example: "1994-05-17" }),
    gender: Gender,
    interestedIn: z.array(Gender).min(1).max(GENDERS.length).openapi({ description: "Who they want to meet" }),
    ageMin: z.number().int().min(MIN_AGE).max(MAX_AGE),
    ageMax: z.number().int().min(MIN_AGE).max(MAX_AGE),
    maxDistanceKm: z.number().int().min(1).max(500),
    bio: z.string().trim().min(10).max(500).nullable(),
    tagline: z.string().trim().min(1).max(100).nullable(),
    interests: z
      .array(z.string().trim().min(1).max(40))
      .max(MAX_INTERESTS)
      .openapi({ description: "At most 10; trimmed, lower-cased and de-duplicated" }),
    photos: z.array(HttpsUrl).max(MAX_PHOTOS).openapi({ description: "At most 6 https URLs" }),
    languages: z
      .array(z.string().regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$/, "a language code such as en or pt-BR"))
      .max(10),
    latitude: z.number().min(-90).max(90).nullable(),
    longitude: z.number().min(-180).max(180).nullable(),
    city: z.string().trim().min(1).max(100).nullable(),
    country: z
      .string()
      .refine(isCountryCode, "an ISO 3166-1 alpha-2 country code")
      .nullable()
      .openapi({ description: "ISO 3166-1 alpha-2, e.g. KE", example: "KE" }),
    visibility: z.enum(VISIBILITIES),
  })
  .partial()
  .strict()
  .openapi("ProfileInput");

