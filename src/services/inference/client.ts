import { z } from "zod";
import type { Clock } from "../../platform/clock";
import type { Logger } from "../../platform/logger";
import { createEmbedder, embedCallFor, type EmbedCall } from "./embeddings";
import { firstAnsweringHost, HostTimeoutError } from "./failover";
import { ollamaAdapter } from "./ollama";
import { openaiAdapter } from "./openai";
import {
  InferenceError,
  type AdapterReply,
  type ChatMessage,
  type CompleteRequest,
  type CompleteResult,
  type GenerateRequest,
  type GenerateResult,
  type HostHealth,
  type InferenceAdapter,
  type InferenceApi,
  type InferenceClient,
  type TokenUsage,
} from "./types";

export interface InferenceClientOptions {
  api: InferenceApi;
  /** Base URLs, tried in this order; a failing host sits out `cooldownMs`. */
  hosts: readonly string[];
  model: string;
  apiKey?: string;
  fetch: typeof fetch;
  clock: Clock;
  logger?: Logger;
  /** Per host attempt (default 30 s): a slower host counts as failed and the next one is tried. */
  timeoutMs?: number;
  /** How long a host that failed is tried only after the healthy ones (default 30 s). */
  cooldownMs?: number;
  /** Health probe timeout (default 5 s). */
  healthTimeoutMs?: number;
  /** Swaps the API flavour's adapter; the real adapters are the default. */
  adapter?: InferenceAdapter;
  /** The embedding model; without one the client offers no embed. */
  embedModel?: string;
  /** Swaps the embedding call of the API flavour. */
  embedCall?: EmbedCall;
}

export const DEFAULT_MODEL = "llama3.1:8b";

const addTokens = (a: TokenUsage, b: TokenUsage): TokenUsage => ({
  prompt: a.prompt + b.prompt,
  completion: a.completion + b.completion,
  total: a.total + b.total,
});

/** The JSON schema sent to the host as Ollama's `format` / OpenAI's `response_format`. */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { unrepresentable: "any", io: "output" }) as Record<string, unknown>;
  return rest;
}

/** Models often wrap JSON in a Markdown fence even when told not to. */
function stripFence(text: string): string {
  const t = text.trim();
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(t);
  return fenced?.[1] ?? t;
}

type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

function parseAnswer<T>(text: string, schema: z.ZodType<T>, check?: (value: T) => string | undefined): Parsed<T> {
  let json: unknown;
  try {
    json = JSON.parse(stripFence(text));
  } catch {
    return { ok: false, problem: "the answer was not valid JSON" };
  }
  const result = schema.safeParse(json);
  if (!result.success) {
    const first = result.error.issues.slice(0, 3).map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    return { ok: false, problem: `the answer did not match the schema (${first.join("; ")})` };
  }
  const problem = check?.(result.data);
  return problem ? { ok: false, problem } : { ok: true, value: result.data };
}

/**
 * The inference client: one adapter (Ollama or OpenAI-compatible), several hosts with failover,
 * a cooldown for a host that just failed, a timeout per host attempt, the caller's abort passed
 * down to the host's request, and one re-ask when a structured answer does not validate.
 */
export function createInferenceClient(options: InferenceClientOptions): InferenceClient {
  const adapter =
    options.adapter ?? (options.api === "openai" ? openaiAdapter({ fetch: options.fetch, apiKey: options.apiKey }) : ollamaAdapter({ fetch: options.fetch, apiKey: options.apiKey }));
  const hosts = [...options.hosts];
  const timeoutMs = options.timeoutMs ?? 30_000;
  const cooldownMs = options.cooldownMs ?? 30_000;
  const healthTimeoutMs = options.healthTimeoutMs ?? 5_000;
  /** Host → time until which it is only tried after the others. */
  const coolingUntil = new Map<string, number>();
  const now = () => options.clock.now();
  /** Each feature's schema is converted once per client, not on every call. */
  const jsonSchemas = new WeakMap<z.ZodType, Record<string, unknown>>();
  const jsonSchemaFor = (schema: z.ZodType): Record<string, unknown> => {
    let out = jsonSchemas.get(schema);
    if (!out) {
      out = jsonSchemaOf(schema);
      jsonSchemas.set(schema, out);
    }
    return out;
  };

  function ordered(): string[] {
    const t = now();
    const ready = hosts.filter((h) => (coolingUntil.get(h) ?? 0) <= t);
    const cooling = hosts.filter((h) => (coolingUntil.get(h) ?? 0) > t).sort((a, b) => (coolingUntil.get(a) ?? 0) - (coolingUntil.get(b) ?? 0));
    return [...ready, ...cooling];
  }

  /** Streamed requests whose consumer has pieces from an attempt that is not the answer (yet). */
  const delivered = new WeakSet<CompleteRequest>();

  async function callHosts(request: CompleteRequest, messages: ChatMessage[], jsonSchema?: Record<string, unknown>): Promise<{ reply: AdapterReply; host: string }> {
    if (hosts.length === 0) throw new InferenceError("unavailable", "no inference host is configured");
    const stream = request.stream ?? request.onDelta !== undefined;
    const consumer = request.onDelta;
    const onDelta =
      consumer &&
      ((text: string) => {
        delivered.add(request);
        consumer(text);
      });
    const { value: reply, host } = await firstAnsweringHost(
      {
        hosts: ordered(),
        timeoutMs: request.timeoutMs ?? timeoutMs,
        signal: request.signal,
        attempt: async (host, signal) => {
          if (delivered.delete(request)) request.onRestart?.();
          const reply = await adapter.chat({
            host,
            model: options.model,
            messages,
            jsonSchema,
            stream,
            onDelta,
            temperature: request.temperature,
            maxTokens: request.maxTokens,
            signal,
          });
          coolingUntil.delete(host);
          return reply;
        },
        failed: (host, error) => {
          coolingUntil.set(host, now() + cooldownMs);
          options.logger?.warn("inference host failed", { host, error: error instanceof Error ? error.message : String(error) });
        },
      },
      (lastError) => (lastError instanceof HostTimeoutError ? "the AI service did not answer in time" : "the AI service is temporarily unavailable"),
    );
    return { reply, host };
  }

  const embed = options.embedModel
    ? createEmbedder({
        call: options.embedCall ?? embedCallFor(options.api, { fetch: options.fetch, apiKey: options.apiKey }),
        model: options.embedModel,
        roster: { ordered, failed: (host) => void coolingUntil.set(host, now() + cooldownMs), succeeded: (host) => void coolingUntil.delete(host) },
        clock: options.clock,
        timeoutMs,
        logger: options.logger,
      })
    : undefined;

  return {
    api: adapter.api,
    hosts,
    model: options.model,
    configured: hosts.length > 0,
    embedModel: options.embedModel,
    embed,

    async complete(request) {
      const started = now();
      const { reply, host } = await callHosts(request, request.messages, request.jsonSchema);
      return { text: reply.text, model: reply.model, tokens: reply.tokens, host, durationMs: now() - started };
    },

    async generate<T>(request: GenerateRequest<T>): Promise<GenerateResult<T>> {
      const started = now();
      const jsonSchema = jsonSchemaFor(request.schema);
      let messages = request.messages;
      let tokens: TokenUsage = { prompt: 0, completion: 0, total: 0 };
      let problem = "";
      for (let attempt = 1; attempt <= 2; attempt++) {
        const { reply, host } = await callHosts(request, messages, jsonSchema);
        tokens = addTokens(tokens, reply.tokens);
        const parsed = parseAnswer(reply.text, request.schema, request.check);
        if (parsed.ok) return { value: parsed.value, model: reply.model, tokens, host, durationMs: now() - started, attempts: attempt };
        problem = parsed.problem;
        options.logger?.warn("inference answer invalid", { host, attempt, problem });
        messages = [
          ...request.messages,
          { role: "assistant", content: reply.text.slice(0, 4000) },
          { role: "user", content: `That answer was rejected: ${problem}. Answer again with only one JSON object that matches the required schema.` },
        ];
      }
      throw new InferenceError("invalid_answer", `the model's answer stayed invalid after a retry: ${problem}`);
    },

    async health(signal) {
      return Promise.all(
        hosts.map(async (host): Promise<HostHealth> => {
          const started = now();
          const timer = AbortSignal.timeout(healthTimeoutMs);
          const coolingDown = (coolingUntil.get(host) ?? 0) > now();
          try {
            const models = await adapter.models(host, signal ? AbortSignal.any([signal, timer]) : timer);
            return { host, reachable: true, models, latencyMs: now() - started, coolingDown };
          } catch (err) {
            return { host, reachable: false, models: [], latencyMs: now() - started, coolingDown, error: err instanceof Error ? err.message.slice(0, 200) : "unreachable" };
          }
        }),
      );
    },
  };
}
