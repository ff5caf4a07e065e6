import type { z } from "zod";
import { ApiError } from "../../errors";

export type InferenceApi = "ollama" | "openai";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** Token counts as the host reported them (0 where the host reported none). */
export interface TokenUsage {
  prompt: number;
  completion: number;
  total: number;
}

/** One raw chat call against one host, as an adapter performs it. */
export interface AdapterCall {
  host: string;
  model: string;
  messages: ChatMessage[];
  /** A JSON schema the host constrains its answer to (Ollama `format`, OpenAI `response_format`). */
  jsonSchema?: Record<string, unknown>;
  stream: boolean;
  onDelta?: (text: string) => void;
  temperature?: number;
  maxTokens?: number;
  signal: AbortSignal;
}

/**
 * The caller's onDelta threw while a host was streaming. The host did nothing wrong: it is not
 * cooled down, no other host is tried, and the caller gets its own error back.
 */
export class ConsumerError extends Error {
  constructor(readonly original: unknown) {
    super("the stream's consumer failed", { cause: original });
    this.name = "ConsumerError";
  }
}

/** Hands a streamed piece to the caller; what the caller throws comes back as a ConsumerError. */
export function deliver(call: Pick<AdapterCall, "onDelta">, text: string): void {
  if (!call.onDelta) return;
  try {
    call.onDelta(text);
  } catch (err) {
    throw new ConsumerError(err);
  }
}

export interface AdapterReply {
  text: string;
  /** The model name the host says answered. */
  model: string;
  tokens: TokenUsage;
}

/** One inference API flavour (Ollama or OpenAI-compatible) spoken over deps.fetch. */
export interface InferenceAdapter {
  readonly api: InferenceApi;
  chat(call: AdapterCall): Promise<AdapterReply>;
  /** The models the host has loaded (Ollama /api/tags, OpenAI /v1/models). */
  models(host: string, signal: AbortSignal): Promise<string[]>;
}

export interface CompleteRequest {
  messages: ChatMessage[];
  /** The caller's cancellation, e.g. the HTTP request's signal (`c.req.raw.signal`). */
  signal?: AbortSignal;
  /** Per host attempt; defaults to the client's timeout. */
  timeoutMs?: number;
  /** Stream the answer from the host; implied by onDelta. */
  stream?: boolean;
  /**
   * Receives each piece of text as it arrives (streams the call). Pieces are provisional: when an
   * attempt fails after some were delivered (a host failing mid-stream, an answer that does not
   * parse), onRestart is called and the next attempt's answer arrives from its start.
   */
  onDelta?: (text: string) => void;
  /** The pieces delivered so far are void; see onDelta. */
  onRestart?: () => void;
  temperature?: number;
  maxTokens?: number;
  jsonSchema?: Record<string, unknown>;
}

export interface CompleteResult {
  text: string;
  model: string;
  tokens: TokenUsage;
  /** The base URL of the host that answered. */
  host: string;
  durationMs: number;
}

export interface GenerateRequest<T> extends Omit<CompleteRequest, "jsonSchema"> {
  /** The answer's shape; its JSON schema is sent to the host, and the answer is parsed by it. */
  schema: z.ZodType<T>;
  /**
   * Further checks on a parsed answer (e.g. that it does not echo the system prompt). A returned
   * problem counts as an invalid answer: the model is asked once more, told what was wrong.
   */
  check?: (value: T) => string | undefined;
}

export interface GenerateResult<T> extends Omit<CompleteResult, "text"> {
  value: T;
  /** 1, or 2 when the first answer was invalid and the model was asked again. */
  attempts: number;
}

export interface EmbedRequest {
  /** Texts to embed; one vector each, in the same order. */
  input: string[];
  signal?: AbortSignal;
  /** Per host attempt; defaults to the client's timeout. */
  timeoutMs?: number;
}

export interface EmbedResult {
  embeddings: number[][];
  model: string;
  host: string;
  durationMs: number;
}

export interface HostHealth {
  host: string;
  reachable: boolean;
  models: string[];
  latencyMs: number;
  /** True while the host sits out its cooldown after a failure. */
  coolingDown: boolean;
  error?: string;
}

/**
 * The inference port. Built once per app (createApp) from config + deps.fetch + deps.clock, and
 * found on `c.var.runtime.inference`; tests point INFERENCE_URL at test/support/fake-inference.ts.
 */
export interface InferenceClient {
  readonly api: InferenceApi;
  readonly hosts: readonly string[];
  readonly model: string;
  /** Whether INFERENCE_URL names any host; without one, every call throws 503. */
  readonly configured: boolean;
  /** Structured output: a JSON answer parsed and validated by `schema`, asked again once if invalid. */
  generate<T>(request: GenerateRequest<T>): Promise<GenerateResult<T>>;
  /** Free text, with the same failover, timeout and abort as generate. */
  complete(request: CompleteRequest): Promise<CompleteResult>;
  /** Every host's reachability and loaded models, asked in parallel. */
  health(signal?: AbortSignal): Promise<HostHealth[]>;
  /** The embedding model (INFERENCE_EMBED_MODEL); absent: no embeddings, embed is not offered. */
  readonly embedModel?: string;
  /**
   * Vectors for texts, with the same host order, cooldown, timeout and abort as generate. Throws
   * "unavailable" when no host answers or none offers the embedding model.
   */
  embed?(request: EmbedRequest): Promise<EmbedResult>;
}

export type InferenceFailure =
  /** No host configured, every host failed or timed out: 503 service_unavailable. */
  | "unavailable"
  /** The answer stayed unparseable or invalid after the one retry: 500 internal_error. */
  | "invalid_answer"
  /** The caller's signal fired (the client went away). */
  | "aborted";

/** What the port throws; an ApiError, so a route that lets it through answers the right status. */
export class InferenceError extends ApiError {
  readonly reason: InferenceFailure;
  constructor(reason: InferenceFailure, message: string, cause?: unknown) {
    const invalid = reason === "invalid_answer";
    // A 500 tells the client no more than "internal error"; the cause carries the problem to the log.
    super(invalid ? "internal_error" : "service_unavailable", invalid ? undefined : message, { cause: cause ?? (invalid ? new Error(message) : undefined) });
    this.reason = reason;
    this.name = "InferenceError";
  }
}
