import { z } from "@hono/zod-openapi";
import { principalOf } from "../../http/auth";
import { createRouter, jsonBody } from "../../http/router";
import { DEFAULT_LANGUAGE, type LanguageCode } from "../../services/ai/languages";
import { PLATFORMS, PRIORITIES, requestVideoSupport } from "../../services/support-video/queue";
import { AI_AGENTS_PREFIX, Language, aiRoute, aiValidation, envelopeSchema } from "./shared";

const isTimeZone = (tz: string) => {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
};

const Instant = z.iso.datetime({ offset: true }).openapi({ example: "2026-03-02T15:00:00+01:00" });
const Window = z
  .object({ from: Instant, to: Instant })
  .strict()
  .refine((w) => Date.parse(w.to) > Date.parse(w.from), { message: "to must be after from", path: ["to"] });

const VideoRequestInput = z
  .object({
    userId: z.string().min(1).max(64).optional().openapi({ description: "Whom the call is for: yourself (the default); support staff may name anyone" }),
    reason: z.string().trim().min(10).max(1000).openapi({ description: "What the call is about (10–1,000 characters)" }),
    priority: z.enum(PRIORITIES).default("normal").openapi({ description: "Members choose `low` or `normal`; `high` and `urgent` are set by support staff" }),
    platform: z.enum(PLATFORMS),
    language: Language.default(DEFAULT_LANGUAGE),
    callbackTimes: z.array(Window).max(5).default([]).openapi({ description: "Up to 5 windows the person can take the call; empty: as soon as possible" }),
    timezone: z.string().max(64).refine(isTimeZone, "an IANA time zone such as Europe/Paris").default("UTC"),
  })
  .strict()
  .openapi("SupportVideoRequestInput");

const VideoRequestResult = z
  .object({
    requestId: z.string(),
    userId: z.string(),
    status: z.literal("waiting"),
    priority: z.enum(PRIORITIES),
    platform: z.enum(PLATFORMS),
    queuePosition: z.number().int().openapi({ description: "1 = next; requests of higher priority or earlier at the same priority are ahead" }),
    estimatedWaitMinutes: z.number().int().openapi({ description: "queuePosition × SUPPORT_VIDEO_HANDLING_MINUTES" }),
    statusMessage: z.string(),
    statusMessageLanguage: z.string().openapi({ description: "The requested language, or `en` where the message has no translation" }),
    language: z.string(),
    callbackTimes: z.array(z.object({ from: z.string(), to: z.string() })),
    timezone: z.string(),
    createdAt: z.string(),
  })
  .openapi("SupportVideoRequest");

const validate = aiValidation([{ matches: () => true, schema: VideoRequestInput, codes: { language: "invalid_language" } }]);

const aiErrorResponse = (description: string) => ({ description });

export const supportVideoRoutes = createRouter().openapi(
  aiRoute("ai", {
    method: "post",
    path: `${AI_AGENTS_PREFIX}/support-video/request`,
    tags: ["ai"],
    summary: "Queue a video call with human support",
    request: { body: jsonBody(VideoRequestInput) },
    responses: {
      201: { description: "Queued", content: { "application/json": { schema: envelopeSchema("SupportVideoRequestEnvelope", VideoRequestResult) } } },
      403: aiErrorResponse("`userId` names someone else and the caller is not support staff"),
      404: aiErrorResponse("Support staff named an unknown user"),
      409: aiErrorResponse("A request is already waiting for this person; `details` names it"),
    },
  }),
  async (c) => {
    const input = c.req.valid("json");
    const result = await requestVideoSupport(
      { db: c.var.db, ids: c.var.deps.ids, now: c.var.deps.clock.now(), handlingMinutes: c.var.deps.config.SUPPORT_VIDEO_HANDLING_MINUTES },
      principalOf(c),
      { ...input, language: input.language as LanguageCode },
    );
    // The AI envelope, with 201: the request is a new resource.
    return c.json({ success: true as const, data: result, timestamp: new Date(c.var.deps.clock.now()).toISOString() }, 201);
  },
  (result, c) => {
    validate(result as never, c);
    return undefined;
  },
);
