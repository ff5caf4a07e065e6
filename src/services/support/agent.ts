import { z } from "zod";
import type { Principal } from "../../auth/principal";
import type { Db } from "../../db/port";
import { ApiError } from "../../errors";
import type { Logger } from "../../platform/logger";
import type { Random } from "../../platform/ids";
import { languageName, type LanguageCode } from "../ai/languages";
import { createFence, echoesPrompt, InferenceError, type InferenceClient } from "../inference";
import { choicesOf } from "../inference/choices";
import type { Hit } from "../kb/retrieval";
import { categoryOf, type Section, type SupportCategory } from "../kb/sections";
import type { KbCache } from "../kb/snapshot";
import { queryVector, sectionVectors, type EmbeddingState } from "../kb/vectors";
import type { Clock } from "../../platform/clock";
import { escalationReasons, SAFETY_REASONS, type EscalationReason } from "./escalation";
import { phrasesFor } from "./phrases";
import { relevantHits } from "./relevance";

export interface SupportQuestion {
  query: string;
  language: LanguageCode;
  topic?: SupportCategory;
  /** Detailed form only: the member's own id (checked against the caller). */
  userId?: string;
  context?: string;
  userType?: string;
  platform?: string;
  tags?: string[];
}

export interface Citation {
  title: string;
  source: string;
}

/** The flat support chat result of the spec. */
export interface SupportAnswer {
  success: true;
  response: string;
  category: SupportCategory;
  escalate: boolean;
  ticketHint: string;
  citations: Citation[];
}

export interface SupportContext {
  db: Db;
  cache: KbCache;
  inference: InferenceClient;
  random: Random;
  logger: Logger;
  /** Per host attempt; the support agent answers from the knowledge base rather than wait longer. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Blended retrieval when the inference client has an embedding model; BM25 alone without this. */
  embeddings?: {
    /** The app instance's section and question embeddings. */
    state: EmbeddingState;
    clock: Clock;
    /** The longest the question waits for its own vector. */
    timeoutMs: number;
    /** Keeps the section vectors' build alive after the response (Workers' waitUntil). */
    background?: (work: Promise<unknown>) => void;
  };
}

/** How many sections the model sees: enough to answer, few enough to keep the prompt small. */
export const SECTIONS_FOR_MODEL = 4;
const MAX_SECTION_CHARS = 2_500;

/** The section labels the model sees for `count` retrieved sections: S1…Sn. */
const labelsFor = (count: number) => Array.from({ length: count }, (_, i) => `S${i + 1}`);

/**
 * The model's answer for one request. Its citations are an enum of the labels of the sections
 * shown, so a host that enforces the schema can only cite those; whatever else a host writes is
 * resolved to a shown section (its label, title or id) or dropped.
 */
function modelAnswerSchema(hits: Hit[]) {
  const labels = labelsFor(hits.length);
  return z.object({
    response: z.string().min(1).max(4_000),
    citations: choicesOf(labels, 8, (ref) => {
      const section = resolveCitation(ref, hits);
      return section ? labels[hits.findIndex((h) => h.section === section)] : undefined;
    }),
    escalate: z.boolean(),
    ticketHint: z.string().max(300),
  });
}
type ModelAnswer = z.infer<ReturnType<typeof modelAnswerSchema>>;

const oneLine = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1).trimEnd()}…` : flat;
};

/** A one-line summary for support staff (in English, the team's working language). */
export function ticketHintFor(question: SupportQuestion, category: SupportCategory, reasons: EscalationReason[]): string {
  const flags = reasons.length ? ` [${reasons.join(", ")}]` : "";
  return oneLine(`${category}: ${question.query}`, 160 - flags.length) + flags;
}

const LATIN_END = new Set([".", "!", "?"]);
const CJK_END = new Set(["。", "！", "？"]);

/**
 * Sentences in one forward pass. A Latin terminator ends a sentence only before a blank or the
 * end, so "$4.99", "v2.5" and "help.example.com" stay whole; CJK terminators end one wherever
 * they are (that script puts no blank after them).
 */
export function sentencesOf(plain: string): string[] {
  const sentences: string[] = [];
  let start = 0;
  for (let i = 0; i < plain.length; i++) {
    const c = plain[i] as string;
    if (!LATIN_END.has(c) && !CJK_END.has(c)) continue;
    let end = i + 1;
    while (end < plain.length && (LATIN_END.has(plain[end] as string) || CJK_END.has(plain[end] as string))) end++;
    if (CJK_END.has(plain[end - 1] as string) || end === plain.length || plain[end] === " ") {
      if (plain[end] === " ") end++;
      sentences.push(plain.slice(start, end));
      start = end;
    }
    i = end - 1;
  }
  if (start < plain.length) sentences.push(plain.slice(start));
  return sentences;
}

/** The first sentences of a section, up to about `max` characters. */
export function leadSentences(text: string, max = 420): string {
  // Only the opening can be quoted: a long section is not read to its end.
  const plain = text.slice(0, max * 8).replace(/^[-*]\s+/gm, "").replace(/\s+/g, " ").trim();
  const sentences = sentencesOf(plain);
  let out = "";
  for (const s of sentences) {
    if (out && out.length + s.length > max) break;
    out += s;
    if (out.length >= max / 2 && out.length > 160) break;
  }
  return oneLine(out || plain, max + 40);
}

const cite = (s: Section): Citation => ({ title: s.title, source: s.source });

/**
 * Answers a member's support question from the knowledge base: retrieve the best sections, let
 * the model answer from them alone (the schema lets it cite only those; anything else a host
 * writes is dropped), and fall back to a
 * deterministic answer built from the best section whenever the model cannot answer.
 */
export async function answerSupport(ctx: SupportContext, actor: Principal, question: SupportQuestion): Promise<{ answer: SupportAnswer; via: "model" | "fallback" }> {
  if (question.userId !== undefined && question.userId !== actor.userId && actor.role !== "admin") {
    throw new ApiError("forbidden", "userId must be your own", { details: [{ path: "userId", message: "not the caller" }] });
  }
  const snapshot = await ctx.cache.get(ctx.db);
  const searchText = [question.query, ...(question.tags ?? [])].join(" ");
  const hits = relevantHits(await snapshot.index(), searchText, SECTIONS_FOR_MODEL, await semanticFor(ctx, snapshot.sections, snapshot, searchText));
  const reasons = escalationReasons(`${question.query} ${question.context ?? ""}`);
  const safetyRisk = reasons.some((r) => SAFETY_REASONS.includes(r));
  const category: SupportCategory = safetyRisk ? "safety" : (question.topic ?? categoryOf(question.query) ?? hits[0]?.section.category ?? "technical");
  if (hits.length === 0) reasons.push("nothing_found");

  if (ctx.inference.configured && hits.length > 0) {
    try {
      const model = await askModel(ctx, question, hits, reasons);
      const used = new Map<string, Section>();
      for (const label of model.citations) {
        const section = resolveCitation(label, hits);
        if (section) used.set(section.id, section);
      }
      const allReasons: EscalationReason[] = model.escalate ? [...reasons, "model"] : reasons;
      return {
        via: "model",
        answer: {
          success: true,
          response: model.response.trim(),
          category,
          escalate: allReasons.length > 0,
          ticketHint: model.ticketHint.trim() ? oneLine(model.ticketHint, 200) : ticketHintFor(question, category, allReasons),
          citations: [...used.values()].map(cite),
        },
      };
    } catch (err) {
      if (err instanceof InferenceError && err.reason === "aborted") throw err;
      if (!(err instanceof InferenceError)) throw err;
      const cause = err.cause instanceof Error ? err.cause.message : undefined;
      ctx.logger.warn("support agent answering from the knowledge base: inference failed", { reason: err.reason, error: cause ?? err.message });
    }
  }
  return { via: "fallback", answer: fallbackAnswer(question, category, hits, reasons) };
}

/**
 * Section vectors and the question's vector, when both are at hand; otherwise undefined and the
 * question is answered from BM25 alone. The question is embedded as asked (a multilingual model
 * places it near the sections in any language), within its own short timeout.
 */
async function semanticFor(ctx: SupportContext, sections: Section[], snapshot: object, searchText: string) {
  if (!ctx.embeddings || !ctx.inference.embedModel) return undefined;
  const vectors = sectionVectors(ctx.embeddings.state, snapshot, sections, { inference: ctx.inference, clock: ctx.embeddings.clock, logger: ctx.logger, background: ctx.embeddings.background });
  if (!vectors) return undefined;
  const query = await queryVector(ctx.embeddings.state, ctx.inference, searchText, { clock: ctx.embeddings.clock, timeoutMs: ctx.embeddings.timeoutMs, signal: ctx.signal });
  return query ? { vectors, sections, query } : undefined;
}

/** The answer without a model: the best section's first sentences, with its citation. */
export function fallbackAnswer(question: SupportQuestion, category: SupportCategory, hits: Hit[], reasons: EscalationReason[]): SupportAnswer {
  const phrases = phrasesFor(question.language);
  const best = hits[0]?.section;
  const parts: string[] = [];
  if (reasons.includes("self_harm") || reasons.includes("threat")) parts.push(phrases.crisis);
  if (best) parts.push(`${phrases.found} ${leadSentences(best.text)}`);
  else parts.push(phrases.notFound);
  if (reasons.length > 0) parts.push(phrases.handover);
  return {
    success: true,
    response: parts.join("\n\n"),
    category,
    escalate: reasons.length > 0,
    ticketHint: ticketHintFor(question, category, reasons),
    citations: best ? [cite(best)] : [],
  };
}

/** A model's citation ("S2", or a section's title or id) → one of the retrieved sections, or nothing. */
function resolveCitation(ref: string, hits: Hit[]): Section | undefined {
  const trimmed = ref.trim().replace(/^\[|\]$/g, "");
  const numbered = /^S(\d{1,2})$/i.exec(trimmed);
  if (numbered) return hits[Number(numbered[1]) - 1]?.section;
  const lower = trimmed.toLowerCase();
  return hits.find((h) => h.section.id === trimmed || h.section.title.toLowerCase() === lower)?.section;
}

export function supportSystemPrompt(language: LanguageCode, fenceRules: string): string {
  return [
    "You are the support assistant of a dating and social platform.",
    "Answer the member's question using only the knowledge-base sections given as data blocks named S1, S2 and so on. Do not use outside knowledge and never invent policies, prices, limits or features.",
    `Write the response in ${languageName(language)}, in two to five short sentences, friendly and direct.`,
    'List in "citations" the names (such as "S1") of the sections your answer relies on, and only those.',
    'Set "escalate" to true when the sections do not answer the question, when the member asks for a person, or when the message mentions threats, violence, self-harm, a minor, blackmail or extortion.',
    'Write "ticketHint" as one English line of at most 120 characters summarising the member\'s issue for the support team.',
    fenceRules,
  ].join("\n");
}

async function askModel(ctx: SupportContext, question: SupportQuestion, hits: Hit[], reasons: EscalationReason[]): Promise<ModelAnswer> {
  const fence = createFence(ctx.random);
  const system = supportSystemPrompt(question.language, fence.rules);
  // Our own words stand outside the data blocks; whatever the member typed goes inside one.
  const about = [
    question.topic ? `Topic chosen by the member: ${question.topic}` : undefined,
    reasons.length ? `Signals already detected: ${reasons.join(", ")}` : undefined,
  ].filter(Boolean);
  const details = [
    question.platform ? `Platform: ${oneLine(question.platform, 60)}` : undefined,
    question.userType ? `Member type: ${oneLine(question.userType, 60)}` : undefined,
    question.tags?.length ? `Tags: ${question.tags.map((t) => oneLine(t, 40)).join(", ")}` : undefined,
  ].filter(Boolean);
  const user = [
    ...hits.map((h, i) => fence.block(`S${i + 1}`, `${h.section.title}\n\n${h.section.text.slice(0, MAX_SECTION_CHARS)}`)),
    question.context ? fence.block("conversation context", question.context) : undefined,
    details.length ? fence.block("member details", details.join("\n")) : undefined,
    about.length ? about.join("\n") : undefined,
    fence.block("member question", question.query),
  ]
    .filter(Boolean)
    .join("\n\n");
  const result = await ctx.inference.generate({
    messages: [
      { role: "system", content: system },
      { role: "user", content: user },
    ],
    schema: modelAnswerSchema(hits),
    check: (value) => echoesPrompt(value, system, fence.tag),
    signal: ctx.signal,
    timeoutMs: ctx.timeoutMs,
    temperature: 0.2,
    maxTokens: 600,
  });
  return result.value;
}
