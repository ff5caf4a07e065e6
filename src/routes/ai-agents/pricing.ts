import { z } from "@hono/zod-openapi";
import { principalOf } from "../../http/auth";
import { createRouter, jsonBody } from "../../http/router";
import { DEFAULT_LANGUAGE, type LanguageCode } from "../../services/ai/languages";
import { priceExperience } from "../../services/ai/pricing";
import { AI_AGENTS_PREFIX, aiContextOf, aiRoute, aiValidation, envelope, envelopeSchema, json, Language, Metadata, type Form } from "./shared";

export const MIN_MINUTES = 15;
export const MAX_MINUTES = 24 * 60;

/** Minutes from a number, or a string such as "90", "90 min", "1.5h", "2 hours". */
function minutes(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(h|hr|hrs|hours?|m|min|mins|minutes?)?\s*$/i.exec(value);
  if (!m) return value;
  const n = Number(m[1]);
  return Math.round(m[2] && /^h/i.test(m[2]) ? n * 60 : n);
}

const Duration = z
  .preprocess(minutes, z.number().int().min(MIN_MINUTES).max(MAX_MINUTES))
  .openapi({ type: ["integer", "string"], description: `Minutes (${MIN_MINUTES} to ${MAX_MINUTES}), or a string like "90 min" or "2h"`, example: 120 });

const PricingInput = z
  .object({
    experienceType: z.string().trim().min(1).max(60).openapi({ example: "wine_tasting" }),
    location: z.string().trim().min(1).max(200),
    duration: Duration,
    amenities: z.array(z.string().trim().min(1).max(60)).max(20).optional(),
    targetAudience: z.string().trim().min(1).max(200).optional(),
    language: Language.optional(),
  })
  .strict()
  .openapi("PricingRequest");

const FORMS: Form[] = [{ matches: () => true, schema: PricingInput, codes: { language: "invalid_language" } }];

const PricingData = z
  .object({
    experienceType: z.string().openapi({ description: "The rate-table type used (`other` when not listed)" }),
    currency: z.literal("usd"),
    basePrice: z.number().int().openapi({ description: "US cents, from the platform's rate table" }),
    finalPrice: z.number().int().openapi({ description: "US cents, after the model's bounded adjustment (±20%)" }),
    adjustment: z.number(),
    reasoning: z.string(),
    confidence: z.number().min(0).max(1),
    breakdown: z.object({ hourlyRate: z.number().int(), hours: z.number(), costLevel: z.enum(["high", "medium", "low"]), amenitiesShare: z.number() }),
    metadata: Metadata,
  })
  .openapi("PricingResult");

const route = aiRoute("ai", {
  method: "post",
  path: `${AI_AGENTS_PREFIX}/experiences/pricing`,
  tags: ["ai"],
  summary: "A price suggestion for a paid experience",
  request: { body: jsonBody(PricingInput) },
  responses: { 200: json(envelopeSchema("PricingEnvelope", PricingData), "The price suggestion") },
});

export const pricingRoutes = createRouter().openapi(
  route,
  async (c) => {
    const body = c.req.valid("json");
    const result = await priceExperience(aiContextOf(c), principalOf(c), {
      experienceType: body.experienceType,
      location: body.location,
      durationMinutes: body.duration as number,
      amenities: body.amenities ?? [],
      targetAudience: body.targetAudience,
      language: (body.language ?? DEFAULT_LANGUAGE) as LanguageCode,
    });
    return envelope(c, result);
  },
  aiValidation(FORMS),
);
