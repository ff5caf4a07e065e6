import { Ollama } from "ollama/browser";
import type { Clock } from "../../platform/clock";
import type { Logger } from "../../platform/logger";
import { firstAnsweringHost, HostTimeoutError } from "./failover";
import { HostHttpError } from "./openai";
import { InferenceError, type EmbedRequest, type EmbedResult, type InferenceApi } from "./types";

/** One raw embedding call against one host. */
export type EmbedCall = (host: string, model: string, input: string[], signal: AbortSignal) => Promise<{ embeddings: number[][]; model: string }>;

/** Ollama's `POST /api/embed {model, input}` → `{embeddings}` through the official client. */
export function ollamaEmbed(options: { fetch: typeof fetch; apiKey?: string }): EmbedCall {
  return async (host, model, input, signal) => {
    const ollama = new Ollama({
      host,
      headers: options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : undefined,
      fetch: ((url: RequestInfo | URL, init?: RequestInit) => options.fetch(url, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal })) as typeof fetch,
    });
    const reply = await ollama.embed({ model, input });
    return { embeddings: reply.embeddings, model: reply.model || model };
  };
}

/** The OpenAI-compatible `POST /v1/embeddings {model, input}` → `{data: [{embedding, index}]}` (vLLM, llama.cpp, TEI). */
export function openaiEmbed(options: { fetch: typeof fetch; apiKey?: string }): EmbedCall {
  return async (host, model, input, signal) => {
    const url = `${host}/v1/embeddings`;
    const res = await options.fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
      body: JSON.stringify({ model, input }),
      signal,
    });
    if (!res.ok) {
      const text = await res.text().catch(() => "");
      throw new HostHttpError(res.status, `${url} answered ${res.status}: ${text.slice(0, 200)}`);
    }
    const body = (await res.json()) as { model?: string; data?: { embedding?: unknown; index?: number }[] };
    const data = [...(body.data ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return { embeddings: data.map((d) => d.embedding as number[]), model: body.model || model };
  };
}

export function embedCallFor(api: InferenceApi, options: { fetch: typeof fetch; apiKey?: string }): EmbedCall {
  return api === "openai" ? openaiEmbed(options) : ollamaEmbed(options);
}

/**
 * The host says it has no such model (Ollama 404 "model not found", vLLM 404, or a 400 naming the
 * model): it does not offer embeddings, which is not an outage and must not cool the host down.
 */
export function isModelMissing(err: unknown): boolean {
  const status = err instanceof HostHttpError ? err.status : (err as { status_code?: unknown } | null)?.status_code;
  if (status === 404) return true;
  const message = err instanceof Error ? err.message : "";
  return status === 400 && /not found|does not exist|no such model|not support|unknown model/i.test(message);
}

/** Every vector present, of one length, of finite numbers: anything else is a broken answer. */
function wellFormed(embeddings: unknown, count: number): embeddings is number[][] {
  if (!Array.isArray(embeddings) || embeddings.length !== count) return false;
  const dim = Array.isArray(embeddings[0]) ? embeddings[0].length : 0;
  return dim > 0 && embeddings.every((v) => Array.isArray(v) && v.length === dim && v.every((x) => typeof x === "number" && Number.isFinite(x)));
}

/** How long a host that has no embedding model is left out of embedding calls. */
export const MODEL_MISSING_MS = 10 * 60 * 1000;

export interface HostRoster {
  /** The hosts in the order the client tries them (healthy first, cooling ones after). */
  ordered(): string[];
  /** A host failed: the client's shared cooldown, so chat calls skip it too. */
  failed(host: string): void;
  succeeded(host: string): void;
}

/**
 * Embeddings with the client's host order and cooldown, a timeout per host attempt and the
 * caller's abort. A host that answers "no such model" is remembered for MODEL_MISSING_MS and not
 * asked again meanwhile, so a deployment without an embedding model costs no call per question.
 */
export function createEmbedder(options: { call: EmbedCall; model: string; roster: HostRoster; clock: Clock; timeoutMs: number; logger?: Logger }) {
  const missingUntil = new Map<string, number>();

  return async function embed(request: EmbedRequest): Promise<EmbedResult> {
    const started = options.clock.now();
    const hosts = options.roster.ordered().filter((h) => (missingUntil.get(h) ?? 0) <= options.clock.now());
    if (hosts.length === 0) throw new InferenceError("unavailable", "no inference host offers the embedding model");
    if (request.input.length === 0) return { embeddings: [], model: options.model, host: hosts[0]!, durationMs: 0 };
    const { value: reply, host } = await firstAnsweringHost(
      {
        hosts,
        timeoutMs: request.timeoutMs ?? options.timeoutMs,
        signal: request.signal,
        attempt: async (host, signal) => {
          const reply = await options.call(host, options.model, request.input, signal);
          if (!wellFormed(reply.embeddings, request.input.length)) throw new Error("the host answered malformed embeddings");
          options.roster.succeeded(host);
          return reply;
        },
        failed: (host, error) => {
          if (!(error instanceof HostTimeoutError) && isModelMissing(error)) {
            missingUntil.set(host, options.clock.now() + MODEL_MISSING_MS);
            options.logger?.info("inference host offers no embedding model", { host, model: options.model });
          } else {
            options.roster.failed(host);
            options.logger?.warn("inference host failed to embed", { host, error: error instanceof Error ? error.message : String(error) });
          }
        },
      },
      (lastError) => (lastError instanceof HostTimeoutError ? "the embedding model did not answer in time" : "no embeddings from any inference host"),
    );
    return { embeddings: reply.embeddings, model: reply.model, host, durationMs: options.clock.now() - started };
  };
}
