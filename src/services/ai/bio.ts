import { z } from "zod";
import type { Principal } from "../../auth/principal";
import { ask, conversation, metadata, type AiContext, type AiMetadata } from "./ask";
import { userContext, type ContextDeps } from "./context-cache";
import type { LanguageCode } from "./languages";
import { profileText } from "./profile-text";
import { charCount, cutToLength } from "./text";

export const BIO_TONES = ["friendly", "casual", "professional"] as const;
export type BioTone = (typeof BIO_TONES)[number];
export const BIO_MIN = 10;
export const BIO_MAX = 500;

export type BioMode = "rewrite" | "optimize";

export interface BioInput {
  currentBio: string;
  /** Empty in the short form: the stored profile's interests are used. */
  interests: string[];
  targetAudience: string | undefined;
  tone: BioTone;
  /** The short form's free-text style, passed as data. */
  style: string | undefined;
  maxLength: number;
  language: LanguageCode;
}

export interface BioResult {
  headline: string;
  bio: string;
  prompts: string[];
  improvements: string[];
  confidence: number;
}

// Lengths are enforced by cutting afterwards rather than in the schema: an over-long answer is
// still a usable answer, and must not turn into a 500.
const Answer = z.object({
  headline: z.string().min(1),
  bio: z.string().min(1),
  prompts: z.array(z.string().min(1)).min(1),
  improvements: z.array(z.string().min(1)),
  confidence: z.number().min(0).max(1),
});
const HEADLINE_MAX = 120;
const ITEM_MAX = 300;

const ROLES: Record<BioMode, string> = {
  rewrite:
    "You are the profile coach of a dating and social platform. You write a member a completely new dating " +
    "bio from scratch: do not reuse the sentences of their current bio; use their profile and interests as facts. " +
    "Keep it honest (invent no facts), warm and specific.",
  optimize:
    "You are the profile coach of a dating and social platform. You improve a member's existing dating bio " +
    "while keeping their core message, voice and facts: fix clarity, flow and grammar, make it more engaging, " +
    "and do not change who they say they are or what they are looking for. Invent no facts.",
};

/** Rewrites or optimises the caller's bio; `bio` never exceeds maxLength (re-asked once, then cut). */
export async function improveBio(ai: AiContext, deps: ContextDeps, actor: Principal, mode: BioMode, input: BioInput): Promise<BioResult & { metadata: AiMetadata }> {
  const context = await userContext(deps, actor);
  const interests = input.interests.length ? input.interests : (context.profile?.interests ?? []);
  const data: [string, string][] = [
    ["member_profile", profileText(context.profile)],
    ["current_bio", input.currentBio],
    ["interests", interests.length ? interests.join(", ") : "(none given)"],
  ];
  if (input.targetAudience) data.push(["target_audience", input.targetAudience]);
  if (input.style) data.push(["requested_style", input.style]);
  const question = {
    role: ROLES[mode],
    data,
    instruction:
      `${mode === "rewrite" ? "Write a new bio" : "Optimise the current bio"} in a ${input.tone} tone` +
      `${input.style ? ", following the requested style where it is reasonable" : ""}. The bio must be at most ` +
      `${input.maxLength} characters. Also give a short headline, 3 conversation-starter prompts others could ` +
      "answer, the improvements you made, and your confidence from 0 to 1. Answer as JSON with fields " +
      "headline, bio, prompts, improvements, confidence.",
    schema: Answer,
    language: input.language,
  };
  const convo = conversation(question, ai);
  let result = await ask(ai, question, convo);
  let tokens = result.tokens.total;
  if (charCount(result.value.bio.trim()) > input.maxLength) {
    const again = {
      ...convo,
      messages: [
        ...convo.messages,
        { role: "assistant" as const, content: JSON.stringify(result.value) },
        {
          role: "user" as const,
          content: `The bio has ${charCount(result.value.bio.trim())} characters; the limit is ${input.maxLength}. Answer again with the same JSON fields and a bio of at most ${input.maxLength} characters.`,
        },
      ],
    };
    result = await ask(ai, question, again);
    tokens += result.tokens.total;
  }
  const v = result.value;
  return {
    headline: cutToLength(v.headline, HEADLINE_MAX),
    bio: cutToLength(v.bio, input.maxLength),
    prompts: v.prompts.slice(0, 5).map((p) => cutToLength(p, ITEM_MAX)),
    improvements: v.improvements.slice(0, 6).map((p) => cutToLength(p, ITEM_MAX)),
    confidence: Math.round(v.confidence * 100) / 100,
    metadata: metadata(ai, { model: result.model, tokens: { total: tokens } }, input.language),
  };
}
