import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Principal } from "../../auth/principal";
import { queryRows } from "../../db/rows";
import { ApiError } from "../../errors";
import { ageOn } from "../profiles/card";
import { visibleTo } from "../safety/visibility";
import { ask, metadata, type AiContext, type AiMetadata } from "./ask";
import { userContext, type ContextDeps, type ProfileSummary } from "./context-cache";
import type { LanguageCode } from "./languages";
import { clamp, cutToLength, contentWords, normaliseInterest, round2 } from "./text";

/** The most the model may move our computed score, either way. */
export const MODEL_ADJUSTMENT = 0.15;
/** Fewer distinct meaningful words than this in a profile text: 422 insufficient_data. */
export const MIN_PROFILE_WORDS = 3;
export const WEIGHTS = { interests: 0.6, location: 0.2, wishes: 0.2 } as const;

export interface MatchInput {
  userProfile: string;
  matchProfile: string;
  /** Empty in the short form: meaningful words of the profile texts stand in. */
  userInterests: string[];
  matchInterests: string[];
  location: string | undefined;
  /** Optional: the other member, whose stated wishes then count (when visible to the caller). */
  matchUserId: string | undefined;
  language: LanguageCode;
}

export interface MatchResult {
  matchScore: number;
  reasoning: string;
  commonInterests: string[];
  confidence: number;
}

const Answer = z.object({
  reasoning: z.string().min(1),
  adjustment: z.number().min(-1).max(1),
  confidence: z.number().min(0).max(1),
});

const ROLE =
  "You are the compatibility analyst of a dating and social platform. The platform has already computed a " +
  "compatibility score from shared interests, location and stated wishes. You read both profiles, explain in " +
  "two to four sentences why the two people may or may not get along, and may nudge the score slightly.";

interface Wishes {
  gender: string;
  age: number;
  interestedIn: string[];
  ageMin: number;
  ageMax: number;
}

/** 1 when each side is someone the other wants to meet (gender and age range), 0 when neither, 0.5 unknown. */
function wishesScore(me: ProfileSummary | null, other: Wishes | undefined): number {
  if (!me || !other) return 0.5;
  const fits = (who: { gender: string; age: number }, wants: { interestedIn: string[]; ageMin: number; ageMax: number }) =>
    (wants.interestedIn.includes(who.gender) ? 0.5 : 0) + (who.age >= wants.ageMin && who.age <= wants.ageMax ? 0.5 : 0);
  return (fits(other, me) + fits(me, other)) / 2;
}

function locationScore(me: ProfileSummary | null, location: string | undefined): number {
  if (!location || !me || (!me.city && !me.country)) return 0.5;
  const where = location.toLowerCase();
  if (me.city && where.includes(me.city.toLowerCase())) return 1;
  if (me.country && new RegExp(`\\b${me.country.toLowerCase()}\\b`).test(where)) return 0.7;
  return 0.3;
}

async function visibleWishes(deps: ContextDeps, actor: Principal, userId: string): Promise<Wishes | undefined> {
  if (userId === actor.userId) return undefined;
  const [row] = await queryRows<{ gender: string; birth_date: string; interested_in: string[]; age_min: number; age_max: number }>(
    deps.db,
    sql`select p.gender, p.birth_date::text as birth_date, p.interested_in, p.age_min, p.age_max from profiles p
        where p.user_id = ${userId} and ${visibleTo(actor.userId, sql`p.user_id`)} limit 1`,
  );
  return row ? { gender: row.gender, age: ageOn(row.birth_date, deps.now), interestedIn: row.interested_in, ageMin: row.age_min, ageMax: row.age_max } : undefined;
}

/** The shared interests, in the caller's spelling, and the overlap score. */
export function interestOverlap(mine: string[], theirs: string[]): { common: string[]; score: number } {
  const theirSet = new Set(theirs.map(normaliseInterest).filter(Boolean));
  const mineByKey = new Map<string, string>();
  for (const i of mine) {
    const key = normaliseInterest(i);
    if (key && !mineByKey.has(key)) mineByKey.set(key, i.trim());
  }
  const common = [...mineByKey].filter(([key]) => theirSet.has(key)).map(([, shown]) => shown);
  if (common.length === 0) return { common, score: 0 };
  const union = new Set([...mineByKey.keys(), ...theirSet]).size;
  const smaller = Math.min(mineByKey.size, theirSet.size);
  return { common, score: 0.5 * (common.length / union) + 0.5 * (common.length / smaller) };
}

export async function predictMatch(ai: AiContext, deps: ContextDeps, actor: Principal, input: MatchInput): Promise<MatchResult & { metadata: AiMetadata }> {
  const userWords = contentWords(input.userProfile);
  const matchWords = contentWords(input.matchProfile);
  if (userWords.size < MIN_PROFILE_WORDS || matchWords.size < MIN_PROFILE_WORDS) {
    throw new ApiError("insufficient_data", "the profiles hold too little to go on", {
      details: `each profile needs at least ${MIN_PROFILE_WORDS} meaningful words`,
    });
  }
  const [context, other] = await Promise.all([userContext(deps, actor), input.matchUserId ? visibleWishes(deps, actor, input.matchUserId) : undefined]);
  const overlap = input.userInterests.length
    ? interestOverlap(input.userInterests, input.matchInterests)
    : interestOverlap([...userWords.values()], [...matchWords.values()]);
  const backbone =
    WEIGHTS.interests * overlap.score + WEIGHTS.location * locationScore(context.profile, input.location) + WEIGHTS.wishes * wishesScore(context.profile, other);

  const result = await ask(ai, {
    role: ROLE,
    data: [
      ["member_profile", input.userProfile],
      ["member_interests", input.userInterests.join(", ") || "(not given)"],
      ["candidate_profile", input.matchProfile],
      ["candidate_interests", input.matchInterests.join(", ") || "(not given)"],
      ["candidate_location", input.location ?? "(not given)"],
    ],
    instruction:
      `The platform's computed score is ${round2(backbone)} (0 to 1); shared interests: ${overlap.common.length}. ` +
      `Explain the compatibility in "reasoning", give "adjustment" between -${MODEL_ADJUSTMENT} and ${MODEL_ADJUSTMENT} ` +
      'to nudge the score, and your "confidence" from 0 to 1. Answer as JSON with fields reasoning, adjustment, confidence.',
    schema: Answer,
    language: input.language,
  });
  const adjustment = clamp(result.value.adjustment, -MODEL_ADJUSTMENT, MODEL_ADJUSTMENT);
  const dataConfidence = clamp(0.4 + 0.1 * Math.min(overlap.common.length, 3) + (other ? 0.15 : 0) + (input.userInterests.length ? 0.15 : 0), 0, 1);
  return {
    matchScore: round2(clamp(backbone + adjustment, 0, 1)),
    reasoning: cutToLength(result.value.reasoning, 1500),
    commonInterests: overlap.common,
    confidence: round2((clamp(result.value.confidence, 0, 1) + dataConfidence) / 2),
    metadata: metadata(ai, result, input.language),
  };
}
