import { z } from "@hono/zod-openapi";
import { principalOf } from "../../http/auth";
import { createRouter, jsonBody } from "../../http/router";
import { DEFAULT_LANGUAGE, type LanguageCode } from "../../services/ai/languages";
import { predictMatch } from "../../services/ai/match";
import { AI_AGENTS_PREFIX, aiContextOf, aiRoute, aiValidation, contextDepsOf, envelope, envelopeSchema, json, Language, Metadata, type Form } from "./shared";

export const MIN_PROFILE_CHARS = 20;
const ProfileText = z.string().trim().min(MIN_PROFILE_CHARS, `at least ${MIN_PROFILE_CHARS} characters (50 or more advised)`).max(4000);
const Interests = z.array(z.string().trim().min(1).max(40)).min(1, "at least one interest (3 to 5 advised)").max(30);

const MatchShort = z
  .object({ user1Profile: ProfileText, user2Profile: ProfileText, language: Language.optional() })
  .strict()
  .openapi("MatchRequestShort");
const MatchDetailed = z
  .object({
    userProfile: ProfileText,
    potentialMatchProfile: ProfileText,
    userInterests: Interests,
    matchInterests: Interests,
    location: z.string().trim().min(1).max(200),
    language: Language,
    matchUserId: z.string().trim().min(1).max(64).optional().openapi({ description: "Optional: the other member; their stated wishes then count when they are visible to you" }),
  })
  .strict()
  .openapi("MatchRequestDetailed");

const DETAILED_ONLY = ["userProfile", "potentialMatchProfile", "userInterests", "matchInterests", "location"];
const FORMS: Form[] = [
  {
    matches: (b) => DETAILED_ONLY.some((k) => k in b),
    schema: MatchDetailed,
    codes: { userProfile: "invalid_profile", potentialMatchProfile: "invalid_profile", userInterests: "missing_interests", matchInterests: "missing_interests", language: "invalid_language" },
  },
  { matches: () => true, schema: MatchShort, codes: { user1Profile: "invalid_profile", user2Profile: "invalid_profile", language: "invalid_language" } },
];

const MatchData = z
  .object({
    matchScore: z.number().min(0).max(1),
    reasoning: z.string(),
    commonInterests: z.array(z.string()),
    confidence: z.number().min(0).max(1),
    metadata: Metadata.optional(),
  })
  .openapi("MatchPrediction");

const route = aiRoute(
  "ai",
  {
    method: "post",
    path: `${AI_AGENTS_PREFIX}/match/predict`,
    tags: ["ai"],
    summary: "Compatibility of two profiles",
    description:
      "Short form: `{user1Profile, user2Profile, language?}`. Detailed form: `{userProfile, potentialMatchProfile, " +
      "userInterests[], matchInterests[], location, language}`, all required, plus optional `matchUserId`; its answer " +
      "adds `data.metadata`. The score is computed from shared interests, location and stated wishes; the model " +
      "adds reasoning and a bounded adjustment (±0.15). 422 insufficient_data when a profile holds too few words.",
    request: { body: jsonBody(z.union([MatchDetailed, MatchShort])) },
    responses: {
      200: json(envelopeSchema("MatchEnvelope", MatchData), "The prediction"),
      422: { description: "A profile holds too few words to judge (`insufficient_data`)" },
    },
  },
  { usesContext: true },
);

export const matchRoutes = createRouter().openapi(
  route,
  async (c) => {
    const body = c.req.valid("json");
    const detailed = "userProfile" in body;
    const { metadata, ...data } = await predictMatch(aiContextOf(c), contextDepsOf(c), principalOf(c), {
      userProfile: detailed ? body.userProfile : body.user1Profile,
      matchProfile: detailed ? body.potentialMatchProfile : body.user2Profile,
      userInterests: detailed ? body.userInterests : [],
      matchInterests: detailed ? body.matchInterests : [],
      location: detailed ? body.location : undefined,
      matchUserId: detailed ? body.matchUserId : undefined,
      language: (body.language ?? DEFAULT_LANGUAGE) as LanguageCode,
    });
    return envelope(c, detailed ? { ...data, metadata } : data);
  },
  aiValidation(FORMS),
);
