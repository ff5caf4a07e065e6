import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../http/env";
import { principalOf } from "../../http/auth";
import { createRouter, jsonBody } from "../../http/router";
import { BIO_MAX, BIO_MIN, BIO_TONES, improveBio, type BioMode, type BioTone } from "../../services/ai/bio";
import { DEFAULT_LANGUAGE, type LanguageCode } from "../../services/ai/languages";
import { AI_AGENTS_PREFIX, aiContextOf, aiRoute, aiValidation, contextDepsOf, envelope, envelopeSchema, json, Language, Metadata, type Form } from "./shared";

const CurrentBio = z.string().trim().min(BIO_MIN, `at least ${BIO_MIN} characters`).max(BIO_MAX, `at most ${BIO_MAX} characters`);

const BioShort = z
  .object({ currentBio: CurrentBio, style: z.string().trim().min(1).max(100), language: Language.optional() })
  .strict()
  .openapi("BioRequestShort");
const BioDetailed = z
  .object({
    currentBio: CurrentBio,
    interests: z.array(z.string().trim().min(1).max(40)).min(1, "at least one interest (2 to 3 advised)").max(20),
    targetAudience: z.string().trim().min(1).max(200),
    tone: z.enum(BIO_TONES),
    maxLength: z.number().int().min(BIO_MIN).max(BIO_MAX).openapi({ description: "Characters" }),
    language: Language,
  })
  .strict()
  .openapi("BioRequestDetailed");

const DETAILED_ONLY = ["interests", "targetAudience", "tone", "maxLength"];
const FORMS: Form[] = [
  {
    matches: (b) => DETAILED_ONLY.some((k) => k in b),
    schema: BioDetailed,
    codes: { currentBio: "invalid_bio_length", interests: "missing_interests", tone: "invalid_tone", maxLength: "invalid_bio_length", language: "invalid_language" },
  },
  { matches: () => true, schema: BioShort, codes: { currentBio: "invalid_bio_length", style: "invalid_tone", language: "invalid_language" } },
];

const BioData = z
  .object({
    headline: z.string(),
    bio: z.string(),
    prompts: z.array(z.string()),
    improvements: z.array(z.string()),
    confidence: z.number().min(0).max(1),
    metadata: Metadata.optional(),
  })
  .openapi("BioResult");

function bioRoute(mode: BioMode) {
  return aiRoute(
    "ai",
    {
      method: "post",
      path: `${AI_AGENTS_PREFIX}/bio/${mode}`,
      tags: ["ai"],
      summary: mode === "rewrite" ? "A new bio written from scratch" : "The bio improved, keeping its core message",
      description:
        "Short form: `{currentBio, style, language?}` (maxLength 500, interests from the stored profile). Detailed form " +
        "(sent with any of interests, targetAudience, tone, maxLength): `{currentBio, interests[], targetAudience, tone, " +
        "maxLength, language}`, all required; its answer adds `data.metadata`. `bio` never exceeds maxLength characters.",
      request: { body: jsonBody(z.union([BioDetailed, BioShort])) },
      responses: { 200: json(envelopeSchema(`Bio${mode === "rewrite" ? "Rewrite" : "Optimize"}Envelope`, BioData), "The improved bio") },
    },
    { usesContext: true },
  );
}

const STYLE_TONES = new Set<string>(BIO_TONES);

async function answer(c: Context<AppEnv>, mode: BioMode, body: z.infer<typeof BioDetailed> | z.infer<typeof BioShort>) {
  const detailed = "maxLength" in body;
  const style = detailed ? undefined : body.style.toLowerCase();
  const styleIsTone = style !== undefined && STYLE_TONES.has(style);
  const { metadata, ...data } = await improveBio(aiContextOf(c), contextDepsOf(c), principalOf(c), mode, {
    currentBio: body.currentBio,
    interests: detailed ? body.interests : [],
    targetAudience: detailed ? body.targetAudience : undefined,
    tone: detailed ? body.tone : styleIsTone ? (style as BioTone) : "friendly",
    style: detailed || styleIsTone ? undefined : body.style,
    maxLength: detailed ? body.maxLength : BIO_MAX,
    language: (body.language ?? DEFAULT_LANGUAGE) as LanguageCode,
  });
  return envelope(c, detailed ? { ...data, metadata } : data);
}

export const bioRoutes = createRouter()
  .openapi(bioRoute("rewrite"), (c) => answer(c, "rewrite", c.req.valid("json")), aiValidation(FORMS))
  .openapi(bioRoute("optimize"), (c) => answer(c, "optimize", c.req.valid("json")), aiValidation(FORMS));
