import { z } from "@hono/zod-openapi";
import { GENDERS } from "../../services/profiles/profiles";

/** Another person's profile as every route shows it: see services/profiles/card.ts. */
export const ProfileCardSchema = z
  .object({
    userId: z.string(),
    displayName: z.string(),
    age: z.number().int(),
    gender: z.enum(GENDERS),
    tagline: z.string().nullable(),
    bio: z.string().nullable(),
    interests: z.array(z.string()),
    photos: z.array(z.string()),
    languages: z.array(z.string()),
    city: z.string().nullable(),
    country: z.string().nullable(),
    distanceKm: z.number().int().nullable().openapi({ description: "Rounded to 5 km (1 under 5 km); null when either side has no position" }),
    lastActiveAt: z.string(),
  })
  .openapi("ProfileCard");
