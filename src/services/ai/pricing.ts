import { z } from "zod";
import type { Principal } from "../../auth/principal";
import { ask, metadata, type AiContext, type AiMetadata } from "./ask";
import type { LanguageCode } from "./languages";
import { clamp, cutToLength, round2 } from "./text";

/** US cents per hour, by experience type; an unknown type prices as "other". */
export const HOURLY_RATES: Record<string, number> = {
  coffee: 1500,
  picnic: 1500,
  walk: 1000,
  hiking: 2000,
  museum: 2500,
  drinks: 2500,
  city_tour: 3000,
  dance_class: 3500,
  dinner: 4000,
  concert: 5000,
  cooking_class: 5000,
  wine_tasting: 6000,
  spa: 8000,
  boat_trip: 9000,
  other: 3000,
};

/** Cost level by city: a multiplier on the hourly rate. Cities not listed count as "medium" (1.0). */
const HIGH_COST = ["new york", "london", "paris", "tokyo", "san francisco", "zurich", "geneva", "singapore", "sydney", "dubai", "hong kong", "oslo", "copenhagen", "los angeles"];
const LOW_COST = ["nairobi", "lagos", "accra", "kampala", "dar es salaam", "addis ababa", "cairo", "mumbai", "delhi", "bangalore", "karachi", "dhaka", "manila", "jakarta", "hanoi", "lima", "bogota"];
export const COST_LEVELS = { high: 1.4, medium: 1.0, low: 0.7 } as const;
/** Each listed amenity adds this share, up to AMENITY_CAP. */
export const AMENITY_SHARE = 0.05;
export const AMENITY_CAP = 0.3;
/** The most the model may move the price, as a share of the base price. */
export const MODEL_ADJUSTMENT = 0.2;

export interface PricingInput {
  experienceType: string;
  location: string;
  durationMinutes: number;
  amenities: string[];
  targetAudience: string | undefined;
  language: LanguageCode;
}

export interface PricingResult {
  experienceType: string;
  currency: "usd";
  basePrice: number;
  finalPrice: number;
  adjustment: number;
  reasoning: string;
  confidence: number;
  breakdown: { hourlyRate: number; hours: number; costLevel: keyof typeof COST_LEVELS; amenitiesShare: number };
}

export function typeKey(value: string): string {
  const key = value.trim().toLowerCase().replace(/[\s-]+/g, "_");
  // hasOwn: "constructor" or "__proto__" are not experience types.
  return Object.hasOwn(HOURLY_RATES, key) ? key : "other";
}

export function costLevel(location: string): keyof typeof COST_LEVELS {
  const where = location.toLowerCase();
  if (HIGH_COST.some((c) => where.includes(c))) return "high";
  if (LOW_COST.some((c) => where.includes(c))) return "low";
  return "medium";
}

/** Our own base price in cents: hourly rate × hours (longer bookings cost less per hour) × cost level × amenities. */
export function basePrice(input: Pick<PricingInput, "experienceType" | "location" | "durationMinutes" | "amenities">) {
  const type = typeKey(input.experienceType);
  const hourlyRate = HOURLY_RATES[type] ?? 3000;
  const hours = input.durationMinutes / 60;
  const level = costLevel(input.location);
  const amenitiesShare = Math.min(AMENITY_CAP, AMENITY_SHARE * new Set(input.amenities.map((a) => a.trim().toLowerCase())).size);
  const cents = hourlyRate * hours ** 0.9 * COST_LEVELS[level] * (1 + amenitiesShare);
  return { type, price: Math.max(100, Math.round(cents / 50) * 50), hourlyRate, hours: round2(hours), level, amenitiesShare: round2(amenitiesShare) };
}

const Answer = z.object({
  adjustment: z.number().min(-1).max(1),
  reasoning: z.string().min(1),
  confidence: z.number().min(0).max(1),
});

const ROLE =
  "You are the pricing analyst for paid experiences (dates, outings, classes) on a dating and social platform. " +
  "The platform has computed a base price from its own rate table; you judge whether the details justify a " +
  "slightly higher or lower price and explain why in two or three sentences.";

export async function priceExperience(ai: AiContext, _actor: Principal, input: PricingInput): Promise<PricingResult & { metadata: AiMetadata }> {
  const base = basePrice(input);
  const result = await ask(ai, {
    role: ROLE,
    data: [
      ["experience_type", input.experienceType],
      ["location", input.location],
      ["amenities", input.amenities.join(", ") || "(none)"],
      ["target_audience", input.targetAudience ?? "(not given)"],
    ],
    instruction:
      `Duration: ${input.durationMinutes} minutes. Base price: ${(base.price / 100).toFixed(2)} USD (cost level ${base.level}). ` +
      `Give "adjustment" as a share of the base price between -${MODEL_ADJUSTMENT} and ${MODEL_ADJUSTMENT}, your "reasoning", ` +
      'and your "confidence" from 0 to 1. Answer as JSON with fields adjustment, reasoning, confidence.',
    schema: Answer,
    language: input.language,
  });
  const adjustment = round2(clamp(result.value.adjustment, -MODEL_ADJUSTMENT, MODEL_ADJUSTMENT));
  return {
    experienceType: base.type,
    currency: "usd",
    basePrice: base.price,
    finalPrice: Math.max(100, Math.round((base.price * (1 + adjustment)) / 50) * 50),
    adjustment,
    reasoning: cutToLength(result.value.reasoning, 1500),
    confidence: round2(clamp(result.value.confidence, 0, 1) * (base.type === "other" ? 0.8 : 1)),
    breakdown: { hourlyRate: base.hourlyRate, hours: base.hours, costLevel: base.level, amenitiesShare: base.amenitiesShare },
    metadata: metadata(ai, result, input.language),
  };
}
