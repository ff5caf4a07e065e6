import { ProfileCardSchema } from "./card-schema";
import { ProfileInput } from "./input-schema";
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { principalOf } from "../../http/auth";
import type { AppEnv } from "../../http/env";
import { createRouter, jsonBody } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { idPattern } from "../../platform/ids";
import { GENDERS, VISIBILITIES, getCard, getOwnProfile, updateProfile, type ProfileContext, type ProfileWriteContext } from "../../services/profiles/profiles";

const Gender = z.enum(GENDERS);

const OwnProfile = z
  .object({
    userId: z.string(),
    displayName: z.string(),
    birthDate: z.string().openapi({ description: "YYYY-MM-DD; only the owner sees it" }),
    age: z.number().int(),
    gender: Gender,
    interestedIn: z.array(Gender),
    ageMin: z.number().int(),
    ageMax: z.number().int(),
    maxDistanceKm: z.number().int(),
    bio: z.string().nullable(),
    tagline: z.string().nullable(),
    interests: z.array(z.string()),
    photos: z.array(z.string()),
    languages: z.array(z.string()),
    latitude: z.number().nullable().openapi({ description: "Position on a 0.01° grid (about 1 km); only the owner sees it" }),
    longitude: z.number().nullable(),
    city: z.string().nullable(),
    country: z.string().nullable(),
    visibility: z.enum(VISIBILITIES),
    createdAt: z.string(),
    updatedAt: z.string(),
    lastActiveAt: z.string(),
  })
  .openapi("Profile");

const ProfileCard = ProfileCardSchema;

const UserIdParam = z.object({
  userId: z.string().max(64).regex(idPattern("usr"), "a user id (usr_…)").openapi({ example: "usr_01j9zq3v5k8m2n4p6r8t0w2y4a" }),
});

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const ctx = (c: Context<AppEnv>): ProfileContext => ({ db: c.var.db, now: c.var.deps.clock.now() });
const writeCtx = (c: Context<AppEnv>): ProfileWriteContext => {
  const deps = c.get("deps");
  return { ...ctx(c), kv: deps.kv, clock: () => deps.clock.now(), logger: deps.logger, requestId: c.get("requestId") };
};

export const profileRoutes = createRouter()
  .openapi(
    protectedRoute("user", {
      method: "get",
      path: "/api/v1/profile",
      tags: ["profiles"],
      summary: "The caller's own profile, in full",
      responses: { 200: json(OwnProfile, "The caller's profile"), 404: { description: "No profile yet (not_found)" } },
    }),
    async (c) => c.json((await getOwnProfile(ctx(c), principalOf(c))) as z.infer<typeof OwnProfile>, 200),
  )
  .openapi(
    protectedRoute("user", {
      method: "put",
      path: "/api/v1/profile",
      tags: ["profiles"],
      summary: "Create (first call) or update the caller's profile; any subset of fields",
      description:
        "The first call creates the profile and needs displayName, birthDate, gender and interestedIn. Later calls change only the fields sent. " +
        "Members must be 18 or older; ageMin ≤ ageMax; latitude and longitude are set together.",
      request: { body: jsonBody(ProfileInput) },
      responses: { 200: json(OwnProfile, "Updated"), 201: json(OwnProfile, "Created") },
    }),
    async (c) => {
      const { created, profile } = await updateProfile(writeCtx(c), principalOf(c), c.req.valid("json"));
      return created ? c.json(profile as z.infer<typeof OwnProfile>, 201) : c.json(profile as z.infer<typeof OwnProfile>, 200);
    },
  )
  .openapi(
    protectedRoute("user", {
      method: "get",
      path: "/api/v1/profile/{userId}",
      tags: ["profiles"],
      summary: "Another person's profile card (age, city and rounded distance only)",
      request: { params: UserIdParam },
      responses: { 200: json(ProfileCard, "The card"), 404: { description: "Unknown, without a profile, hidden, or blocked either way" } },
    }),
    async (c) => c.json((await getCard(ctx(c), principalOf(c), c.req.valid("param").userId)) as z.infer<typeof ProfileCard>, 200),
  );
