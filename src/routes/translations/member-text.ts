import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError } from "../../errors";
import { principalOf } from "../../http/auth";
import type { AppEnv } from "../../http/env";
import { createRouter, jsonBody } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { isLanguage, LANGUAGE_CODES, type LanguageCode } from "../../services/ai/languages";
import { MESSAGE_MAX, translateMessage, translateProfile, type MemberTextContext } from "../../services/translations/member-text";
import { aiContextOf } from "../ai-agents/shared";

const Language = z.string().max(35).openapi({ description: `One of: ${LANGUAGE_CODES.join(", ")}`, example: "fr" });

function language(value: string, path: string): LanguageCode {
  const code = value.trim().toLowerCase();
  if (!isLanguage(code)) throw new ApiError("invalid_language", `'${value}' is not a supported language`, { details: [{ path, message: "one of the 40 supported languages" }] });
  return code;
}

const MessageInput = z
  .object({
    text: z.string().min(1).max(MESSAGE_MAX).openapi({ description: `At most ${MESSAGE_MAX} characters` }),
    targetLanguage: Language,
    sourceLanguage: Language.optional().openapi({ description: "Detected when absent" }),
    contextId: z.string().min(1).max(128).openapi({ description: "The conversation (or other context) the message belongs to; the cache is keyed by it, the text's hash and the target language" }),
  })
  .strict()
  .openapi("MessageTranslationInput");

const MessageTranslation = z
  .object({ translatedText: z.string(), sourceLanguage: z.string(), targetLanguage: z.string(), cached: z.boolean() })
  .openapi("MessageTranslation");

const Fields = z.object({ bio: z.string().nullable(), tagline: z.string().nullable(), interests: z.array(z.string()) });
const ProfileInput = z
  .object({
    targetLanguage: Language,
    userId: z.string().max(64).optional().openapi({ description: "Whose profile (default: the caller's); not with the fields" }),
    bio: z.string().max(500).optional(),
    tagline: z.string().max(200).optional(),
    interests: z.array(z.string().max(100)).max(20).optional(),
  })
  .strict()
  .openapi("ProfileTranslationInput");
const ProfileTranslation = z
  .object({ userId: z.string().nullable(), targetLanguage: z.string(), sourceLanguage: z.string().nullable(), original: Fields, translated: Fields, cached: z.boolean() })
  .openapi("ProfileTranslation");

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const contextOf = (c: Context<AppEnv>): MemberTextContext => ({ ai: aiContextOf(c), db: c.get("db") });

export const memberTextRoutes = createRouter()
  .openapi(
    protectedRoute("ai", {
      method: "post",
      path: "/api/v1/translations/message",
      tags: ["translations"],
      summary: "Translate a chat message (counts against the AI limits; cached by contextId and text)",
      request: { body: jsonBody(MessageInput) },
      responses: {
        200: json(MessageTranslation, "The translation; `cached` when it came from the cache without a model call"),
        400: { description: "Text empty or over 2,000 characters, or an unsupported language (`invalid_language`)" },
        503: { description: "No inference host answers (`service_unavailable`)" },
      },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const input = {
        text: body.text,
        contextId: body.contextId,
        targetLanguage: language(body.targetLanguage, "targetLanguage"),
        sourceLanguage: body.sourceLanguage === undefined ? undefined : language(body.sourceLanguage, "sourceLanguage"),
      };
      return c.json(await translateMessage(contextOf(c), principalOf(c), input), 200);
    },
  )
  .openapi(
    protectedRoute("ai", {
      method: "post",
      path: "/api/v1/translations/profile",
      tags: ["translations"],
      summary: "Translate a profile's bio, tagline and interests (a member's the caller may see, or the fields sent), originals beside the translations",
      request: { body: jsonBody(ProfileInput) },
      responses: {
        200: json(ProfileTranslation, "Originals and translations; `cached` when no model call was made"),
        400: { description: "`userId` with fields, or an unsupported language (`invalid_language`)" },
        404: { description: "No such profile, or one the caller may not see (hidden, blocked)" },
        503: { description: "No inference host answers (`service_unavailable`)" },
      },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const targetLanguage = language(body.targetLanguage, "targetLanguage");
      const given = body.bio !== undefined || body.tagline !== undefined || body.interests !== undefined;
      if (given && body.userId !== undefined) throw new ApiError("invalid_input", "send userId or the fields, not both", { details: [{ path: "userId", message: "not with bio, tagline or interests" }] });
      const fields = given ? { bio: body.bio ?? null, tagline: body.tagline ?? null, interests: body.interests ?? [] } : undefined;
      return c.json(await translateProfile(contextOf(c), principalOf(c), { targetLanguage, userId: body.userId, fields }), 200);
    },
  );
