import type { z } from "zod";
import type { Clock } from "../../platform/clock";
import type { Random } from "../../platform/ids";
import { createFence, echoesPrompt, type ChatMessage, type GenerateResult, type InferenceClient } from "../inference";
import { languageName, type LanguageCode } from "./languages";

/** What every AI service needs from the request: the port, randomness for fences, time, the abort. */
export interface AiContext {
  inference: InferenceClient;
  random: Random;
  clock: Clock;
  /** The HTTP request's signal: a client that leaves cancels the inference call. */
  signal?: AbortSignal;
  /** When the request began, for `processing_time`. */
  startedAt: number;
}

/** `data.metadata` of the detailed forms. */
export interface AiMetadata {
  model_version: string;
  processing_time: number;
  tokens_used: number;
  language: string;
}

export interface Question<T> {
  /** The task, in our words; user text never goes here. */
  role: string;
  /** User-supplied text, each in its own fenced block. */
  data: [label: string, text: string][];
  /** What to produce from the blocks; ours, outside them. */
  instruction: string;
  schema: z.ZodType<T>;
  language: LanguageCode;
  /** Further checks on the answer (the echo check always runs). */
  check?: (value: T) => string | undefined;
  temperature?: number;
}

export interface Conversation {
  messages: ChatMessage[];
  system: string;
  tag: string;
}

export function conversation<T>(q: Question<T>, ctx: AiContext): Conversation {
  const fence = createFence(ctx.random);
  const system = [
    q.role,
    fence.rules,
    `Write every human-readable text field in ${languageName(q.language)} (language code "${q.language}").`,
  ].join("\n\n");
  const user = [...q.data.map(([label, text]) => fence.block(label, text)), q.instruction].join("\n\n");
  return { system, tag: fence.tag, messages: [{ role: "system", content: system }, { role: "user", content: user }] };
}

/** One structured question to the model, with the prompt-safety checks on its answer. */
export async function ask<T>(ctx: AiContext, q: Question<T>, convo: Conversation = conversation(q, ctx)): Promise<GenerateResult<T> & { convo: Conversation }> {
  const result = await ctx.inference.generate({
    messages: convo.messages,
    schema: q.schema,
    signal: ctx.signal,
    temperature: q.temperature ?? 0.4,
    check: (value) => echoesPrompt(value, convo.system, convo.tag) ?? q.check?.(value),
  });
  return { ...result, convo };
}

export function metadata(ctx: AiContext, result: { model: string; tokens: { total: number } }, language: LanguageCode, extraTokens = 0): AiMetadata {
  return {
    model_version: result.model,
    processing_time: Math.max(0, Math.round(ctx.clock.now() - ctx.startedAt)),
    tokens_used: result.tokens.total + extraTokens,
    language,
  };
}
