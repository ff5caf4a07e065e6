import { z } from "@hono/zod-openapi";
import { principalOf } from "../../http/auth";
import { defer } from "../../http/defer";
import { createRouter } from "../../http/router";
import { DEFAULT_LANGUAGE, type LanguageCode } from "../../services/ai/languages";
import { SUPPORT_CATEGORIES } from "../../services/kb/sections";
import { answerSupport, type SupportQuestion } from "../../services/support/agent";
import { AI_AGENTS_PREFIX, aiRoute, aiValidation, Language } from "./shared";

/** The longest the support agent waits for a host before answering from the knowledge base. */
const SUPPORT_TIMEOUT_CAP_MS = 15_000;

const Topic = z.enum(SUPPORT_CATEGORIES);
const ShortForm = z
  .object({
    message: z.string().trim().min(1).max(4_000),
    language: Language.optional(),
    topic: Topic.optional(),
  })
  .strict()
  .openapi("SupportChatShort");
const DetailedForm = z
  .object({
    userId: z.string().trim().min(1).max(64),
    query: z.string().trim().min(1).max(4_000),
    context: z.string().max(8_000).optional(),
    userType: z.string().max(60).optional(),
    platform: z.string().max(60).optional(),
    language: Language.optional(),
    tags: z.array(z.string().trim().min(1).max(50)).max(20).optional(),
  })
  .strict()
  .openapi("SupportChatDetailed");

const SupportChatResult = z
  .object({
    success: z.literal(true),
    response: z.string(),
    category: Topic,
    escalate: z.boolean().openapi({ description: "Route the member to human support" }),
    ticketHint: z.string().openapi({ description: "One line to pre-fill a ticket" }),
    citations: z.array(z.object({ title: z.string(), source: z.string() })).openapi({ description: "The knowledge-base sections the answer used; empty when none" }),
  })
  .openapi("SupportChatResult");

const isDetailed = (b: Record<string, unknown>) => "query" in b || "userId" in b;
const codes = { language: "invalid_language" } as const;
const validate = aiValidation([
  { matches: isDetailed, schema: DetailedForm, codes },
  { matches: () => true, schema: ShortForm, codes },
]);

export const supportRoutes = createRouter().openapi(
  aiRoute("ai", {
    method: "post",
    path: `${AI_AGENTS_PREFIX}/support/chat`,
    tags: ["ai"],
    summary: "Ask the support agent: an answer grounded in the knowledge base, with citations and an escalation flag",
    description:
      "Short form `{message, language?, topic?}` or detailed form `{userId, query, context?, userType?, platform?, language?, tags?}`. " +
      "When no inference host answers in time, the answer is built from the best matching knowledge-base section (header `X-Support-Answer: fallback`).",
    request: { body: { required: true, content: { "application/json": { schema: z.union([DetailedForm, ShortForm]) } } } },
    responses: {
      200: { description: "The flat support chat result", content: { "application/json": { schema: SupportChatResult } } },
      403: { description: "A detailed question with someone else's `userId` (`forbidden`)" },
    },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const language = (body.language ?? DEFAULT_LANGUAGE) as LanguageCode;
    const question: SupportQuestion =
      "query" in body
        ? { query: body.query, language, userId: body.userId, context: body.context, userType: body.userType, platform: body.platform, tags: body.tags }
        : { query: body.message, language, topic: body.topic };
    const deps = c.var.deps;
    const { answer, via } = await answerSupport(
      {
        db: c.var.db,
        cache: c.var.runtime.kb.cache,
        inference: c.var.runtime.inference,
        random: deps.random,
        logger: deps.logger,
        timeoutMs: Math.min(deps.config.INFERENCE_TIMEOUT_MS, SUPPORT_TIMEOUT_CAP_MS),
        signal: c.req.raw.signal,
        embeddings: { state: c.var.runtime.kb.embeddings, clock: deps.clock, timeoutMs: deps.config.INFERENCE_EMBED_TIMEOUT_MS, background: (work) => defer(c, work, "section embeddings") },
      },
      principalOf(c),
      question,
    );
    c.header("X-Support-Answer", via);
    c.header("Cache-Control", "no-store");
    return c.json(answer, 200);
  },
  validate,
);
