import { z } from "@hono/zod-openapi";
import { principalOf } from "../../http/auth";
import { createRouter, jsonBody } from "../../http/router";
import { CHAT_TONES, chatResponse } from "../../services/ai/chat";
import { DEFAULT_LANGUAGE, type LanguageCode } from "../../services/ai/languages";
import { AI_AGENTS_PREFIX, aiContextOf, aiRoute, aiValidation, contextDepsOf, envelope, envelopeSchema, json, Language, Metadata, type Form } from "./shared";

const Message = z.string().trim().min(5, "at least 5 characters").max(2000);
const UserId = z.string().trim().min(1).max(64).openapi({ description: "The caller's own user id" });

const ChatShort = z
  .object({ message: Message, context: z.string().trim().max(4000).optional(), language: Language.optional(), userId: UserId })
  .strict()
  .openapi("ChatRequestShort");
const ChatDetailed = z
  .object({
    message: Message,
    userId: UserId,
    context: z.array(z.string().trim().min(1).max(1000)).min(1, "at least one line of conversation").max(50),
    tone: z.enum(CHAT_TONES),
    language: Language,
  })
  .strict()
  .openapi("ChatRequestDetailed");

const FORMS: Form[] = [
  {
    matches: (b) => "tone" in b || Array.isArray(b.context),
    schema: ChatDetailed,
    codes: { message: "invalid_message", context: "missing_context", tone: "invalid_tone", language: "invalid_language" },
  },
  { matches: () => true, schema: ChatShort, codes: { message: "invalid_message", context: "missing_context", language: "invalid_language" } },
];

const ChatData = z
  .object({ response: z.string(), suggestions: z.array(z.string()), tone: z.string(), nextSteps: z.array(z.string()), metadata: Metadata.optional() })
  .openapi("ChatResult");

const route = aiRoute(
  "ai",
  {
    method: "post",
    path: `${AI_AGENTS_PREFIX}/chat/response`,
    tags: ["ai"],
    summary: "A suggested reply, with alternatives and next steps",
    description:
      "Short form: `{message, context?, language?, userId}`. Detailed form (sent with `tone` or an array `context`): " +
      "`{message, userId, context[], tone, language}`, all required; its answer adds `data.metadata`. Uses the " +
      "context sent, the caller's remembered conversation and their own profile; `userId` must be the caller's.",
    request: { body: jsonBody(z.union([ChatDetailed, ChatShort])) },
    responses: { 200: json(envelopeSchema("ChatEnvelope", ChatData), "The suggested reply"), 404: { description: "`userId` is not the caller's (`not_found`)" } },
  },
  { usesContext: true },
);

export const chatRoutes = createRouter().openapi(
  route,
  async (c) => {
    const body = c.req.valid("json");
    const detailed = "tone" in body;
    const language = (body.language ?? DEFAULT_LANGUAGE) as LanguageCode;
    const context = detailed ? body.context : body.context ? [body.context] : [];
    const { metadata, ...data } = await chatResponse(aiContextOf(c), contextDepsOf(c), principalOf(c), {
      userId: body.userId,
      message: body.message,
      context,
      tone: detailed ? body.tone : "friendly",
      language,
    });
    return envelope(c, detailed ? { ...data, metadata } : data);
  },
  aiValidation(FORMS),
);
