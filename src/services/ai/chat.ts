import { z } from "zod";
import type { Principal } from "../../auth/principal";
import { ApiError } from "../../errors";
import { ask, metadata, type AiContext, type AiMetadata } from "./ask";
import { rememberConversation, userContext, type ContextDeps } from "./context-cache";
import type { LanguageCode } from "./languages";
import { profileText } from "./profile-text";
import { cutToLength } from "./text";

export const CHAT_TONES = ["friendly", "casual", "flirty", "professional", "curious"] as const;
export type ChatTone = (typeof CHAT_TONES)[number];

export interface ChatInput {
  userId: string;
  message: string;
  /** Conversation lines sent with the request (the short form's one string becomes one line). */
  context: string[];
  tone: ChatTone;
  language: LanguageCode;
}

export interface ChatResult {
  response: string;
  suggestions: string[];
  tone: string;
  nextSteps: string[];
}

// Over-long parts are cut afterwards, not rejected: a chatty answer is still a usable answer.
const Answer = z.object({
  response: z.string().min(1),
  suggestions: z.array(z.string().min(1)),
  nextSteps: z.array(z.string().min(1)),
});
const RESPONSE_MAX = 2000;
const ITEM_MAX = 300;
const items = (list: string[]) => list.slice(0, 5).map((i) => cutToLength(i, ITEM_MAX));

const ROLE =
  "You are the conversation assistant of a dating and social platform. You help one member reply well in a " +
  "chat with someone they met on the platform: you draft the reply they could send, a few alternative " +
  "openers or follow-ups, and practical next steps. Be kind, respectful and safe; never pressure anyone, " +
  "never suggest sharing money, passwords or exact addresses.";

/** A suggested reply grounded in the conversation sent, the remembered one, and the caller's own profile. */
export async function chatResponse(ai: AiContext, deps: ContextDeps, actor: Principal, input: ChatInput): Promise<ChatResult & { metadata: AiMetadata }> {
  // The body names a user; only the caller's own context may be used, and another id is not revealed.
  if (input.userId !== actor.userId) throw new ApiError("not_found", "no such user");
  const context = await userContext(deps, actor);
  const history = [...context.conversation.filter((l) => !input.context.includes(l)), ...input.context].slice(-20);
  const result = await ask(ai, {
    role: ROLE,
    data: [
      ["member_profile", profileText(context.profile)],
      ["conversation_so_far", history.length ? history.join("\n") : "(no earlier messages)"],
      ["latest_message", input.message],
    ],
    instruction:
      `Draft the member's reply to the latest message in a ${input.tone} tone. Give up to 3 suggestions ` +
      "(other replies or questions they could send) and up to 3 next steps. Answer as JSON with fields " +
      "response (string), suggestions (array of strings), nextSteps (array of strings).",
    schema: Answer,
    language: input.language,
    temperature: 0.7,
  });
  await rememberConversation(deps, actor, context, [...input.context, input.message]);
  return {
    response: cutToLength(result.value.response, RESPONSE_MAX),
    suggestions: items(result.value.suggestions),
    tone: input.tone,
    nextSteps: items(result.value.nextSteps),
    metadata: metadata(ai, result, input.language),
  };
}
