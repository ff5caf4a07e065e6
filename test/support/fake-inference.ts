import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A loopback inference host that speaks both APIs the platform supports, so the real clients
 * (the `ollama` package, our OpenAI-compatible adapter) are what tests exercise:
 *   Ollama   POST /api/chat (plain, or NDJSON when `stream` is true), GET /api/tags
 *   OpenAI   POST /v1/chat/completions (plain, or SSE when `stream` is true), GET /v1/models
 *   Embeddings: Ollama POST /api/embed, OpenAI POST /v1/embeddings, for any listed model (another
 *   model answers 404 "model not found", as Ollama does); vectors from `fakeEmbedding`.
 *
 * Usage:
 *   const host = await startFakeInference();            // answers valid JSON for any schema
 *   host.script({ response: "Hi", ... });               // the next answer(s), in order
 *   host.respond((call) => ({ ... }));                  // or a function of the call
 *   host.setMode("down" | "slow" | "garbage" | "too-long" | "ok", { delayMs, length });
 *   host.setEmbedMode("down" | "slow" | "garbage" | "ok") // embeddings only (setMode sets both)
 *   host.embedWith((text) => [...])                      // a scripted embedding model
 *   host.received                                        // every call, newest last
 *   await host.waitForAbort();                           // resolves when a client hung up mid-call
 *   await host.close();
 * Without a script or responder, a chat call with a JSON schema (`format` / `response_format`)
 * gets a small object that satisfies it; one without gets the text "ok".
 */
export type FakeMode =
  /** Answer normally. */
  | "ok"
  /** Answer HTTP 503 to chat calls and model listings. */
  | "down"
  /** Wait `delayMs` (default 10 s) before answering; a client that hangs up is recorded. */
  | "slow"
  /** Answer text that is not JSON. */
  | "garbage"
  /** Answer as in "ok", with every string in the answer stretched to `length` characters (default 2,000). */
  | "too-long"
  /** A streamed answer: the first piece, then the host's error inside the stream (OpenAI: an error event, then [DONE]; Ollama: an error line). */
  | "stream-error"
  /** A streamed answer: the first piece, then the connection ends without the stream's end marker. */
  | "stream-cut"
  /** A streamed answer: the first piece, then nothing until the client hangs up (recorded as aborted). */
  | "stream-stall"
  /** Asked to stream, answers one plain JSON reply instead (as a host that ignores `stream` does). */
  | "unstreamed";

export interface ReceivedCall {
  api: "ollama" | "openai";
  path: string;
  method: string;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown> | undefined;
  stream: boolean;
  /** The JSON schema the client sent (Ollama `format`, OpenAI `response_format.json_schema.schema`). */
  schema: Record<string, unknown> | undefined;
  messages: { role: string; content: string }[];
  /** True when the client closed the connection before the answer was complete. */
  aborted: boolean;
}

export type Answer = string | Record<string, unknown>;

export interface FakeInferenceOptions {
  /** Model name reported in replies and listings (default "fake-model:1b"). */
  model?: string;
  /** Extra models listed by /api/tags and /v1/models. */
  models?: string[];
  mode?: FakeMode;
  delayMs?: number;
  /** Token counts reported per reply (default prompt 11, completion 7). */
  tokens?: { prompt: number; completion: number };
  /**
   * How many calls `received` keeps, newest last (default: all of them). A host that serves a
   * benchmark keeps none: a list growing by hundreds of calls a second makes its own garbage
   * collector slower as the run goes on, and its answers late.
   */
  keep?: number;
}

export interface FakeInference {
  url: string;
  received: ReceivedCall[];
  /** Chat calls only. */
  chats(): ReceivedCall[];
  /** Embedding calls only. */
  embeds(): ReceivedCall[];
  setEmbedMode(mode: FakeMode, options?: { delayMs?: number }): void;
  /** Vectors from this function instead of `fakeEmbedding` (a scripted model); undefined restores it. */
  embedWith(fn: ((text: string) => number[]) | undefined): void;
  setMode(mode: FakeMode, options?: { delayMs?: number; length?: number }): void;
  /** Queue answers for the next chat calls; once the queue is empty the responder applies again. */
  script(...answers: Answer[]): void;
  respond(fn: ((call: ReceivedCall) => Answer) | undefined): void;
  waitForAbort(timeoutMs?: number): Promise<ReceivedCall>;
  reset(): void;
  close(): Promise<void>;
}

/** A small value that satisfies a JSON schema (objects, arrays, strings, numbers, enums). */
export function sampleFor(schema: Record<string, unknown> | undefined): unknown {
  if (!schema) return "ok";
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if ("const" in schema) return schema.const;
  const anyOf = (schema.anyOf ?? schema.oneOf) as Record<string, unknown>[] | undefined;
  if (anyOf?.length) return sampleFor(anyOf[0]);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "object": {
      const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
      return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, sampleFor(v)]));
    }
    case "array": {
      const min = typeof schema.minItems === "number" ? schema.minItems : 1;
      const max = typeof schema.maxItems === "number" ? schema.maxItems : Infinity;
      return Array.from({ length: Math.min(Math.max(1, min), max) }, () => sampleFor(schema.items as Record<string, unknown>));
    }
    case "number":
    case "integer": {
      const min = typeof schema.minimum === "number" ? schema.minimum : 0;
      const max = typeof schema.maximum === "number" ? schema.maximum : 1;
      return type === "integer" ? Math.ceil(min) : (min + max) / 2;
    }
    case "boolean":
      return false;
    case "string": {
      const min = typeof schema.minLength === "number" ? schema.minLength : 2;
      return "ok".padEnd(min, "k");
    }
    default:
      return null;
  }
}

/** Words the fake's embedding model treats as one meaning, so tests can ask with a synonym. */
const SYNONYMS: Record<string, string> = { reimbursement: "refund", reimburse: "refund", moneyback: "refund", marejesho: "refund", tokens: "coin", token: "coin" };
const EMBED_DIM = 256;

/**
 * A deterministic stand-in for an embedding model: a hashed bag of words (lower case, a light
 * plural/past strip, words of three letters or fewer dropped, SYNONYMS folded together) in 256
 * dimensions, unit length. Texts sharing words or synonyms get a high cosine; unrelated ones ~0.
 */
export function fakeEmbedding(text: string): number[] {
  const v = new Array<number>(EMBED_DIM).fill(0);
  for (const raw of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (raw.length <= 3) continue;
    const word = raw.replace(/(ed|s)$/, "");
    const meaning = SYNONYMS[raw] ?? SYNONYMS[word] ?? word;
    let h = 2166136261;
    for (let i = 0; i < meaning.length; i++) h = Math.imul(h ^ meaning.charCodeAt(i), 16777619);
    v[(h >>> 0) % EMBED_DIM]! += 1;
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

const FILLER = "This sentence pads the answer well past any sensible limit. ";

/** The same value with every string repeated out to `length` characters, in whole sentences. */
function stretch(value: unknown, length: number): unknown {
  if (typeof value === "string") return `${value} ${FILLER.repeat(Math.ceil(length / FILLER.length))}`.slice(0, length);
  if (Array.isArray(value)) return value.map((v) => stretch(v, length));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, stretch(v, length)]));
  return value;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (data += chunk));
    req.on("end", () => resolve(data));
    req.on("error", reject);
  });
}

function chunks(text: string, parts = 3): string[] {
  const size = Math.max(1, Math.ceil(text.length / parts));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [""];
}

export async function startFakeInference(options: FakeInferenceOptions = {}): Promise<FakeInference> {
  const model = options.model ?? "fake-model:1b";
  const tokens = options.tokens ?? { prompt: 11, completion: 7 };
  const keep = options.keep ?? Number.POSITIVE_INFINITY;
  let mode: FakeMode = options.mode ?? "ok";
  let delayMs = options.delayMs ?? 10_000;
  let embedMode: FakeMode = mode;
  let embedDelayMs = delayMs;
  let stretchTo = 2_000;
  let queue: Answer[] = [];
  let responder: ((call: ReceivedCall) => Answer) | undefined;
  let embedder: (text: string) => number[] = fakeEmbedding;
  const received: ReceivedCall[] = [];
  const abortWaiters: ((call: ReceivedCall) => void)[] = [];

  const answerFor = (call: ReceivedCall): string => {
    if (mode === "garbage") return "Sure! Here is what you asked for: {not json";
    const next = queue.length ? queue.shift() : responder ? responder(call) : (sampleFor(call.schema) as Answer);
    if (mode === "too-long") return JSON.stringify(stretch(typeof next === "string" ? JSON.parse(next) : next, stretchTo));
    return typeof next === "string" ? next : JSON.stringify(next);
  };

  async function embed(res: ServerResponse, call: ReceivedCall): Promise<void> {
    const send = (status: number, body: unknown) => void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (embedMode === "down") return send(503, { error: "model is loading" });
    if (embedMode === "slow") {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, embedDelayMs);
        res.on("close", () => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (res.destroyed || res.writableEnded) return;
    }
    const wanted = String(call.body?.model ?? "");
    if (![model, ...(options.models ?? [])].includes(wanted)) {
      return call.api === "ollama"
        ? send(404, { error: `model "${wanted}" not found, try pulling it first` })
        : send(404, { object: "error", message: `The model \`${wanted}\` does not exist.`, type: "NotFoundError", code: 404 });
    }
    const input = call.body?.input;
    const texts = Array.isArray(input) ? input.map(String) : [String(input ?? "")];
    const vectors = embedMode === "garbage" ? texts.map(() => ["not", "numbers"]) : texts.map((t) => embedder(t));
    if (call.api === "ollama") return send(200, { model: wanted, embeddings: vectors, total_duration: 1, load_duration: 0, prompt_eval_count: texts.length });
    return send(200, { object: "list", model: wanted, data: vectors.map((embedding, index) => ({ object: "embedding", embedding, index })), usage: { prompt_tokens: texts.length, total_tokens: texts.length } });
  }

  async function handle(req: IncomingMessage, res: ServerResponse, call: ReceivedCall): Promise<void> {
    const path = call.path;
    const listing = req.method === "GET" && (path === "/api/tags" || path === "/v1/models");
    const chat = req.method === "POST" && (path === "/api/chat" || path === "/v1/chat/completions");
    if (req.method === "POST" && (path === "/api/embed" || path === "/v1/embeddings")) return embed(res, call);
    if (!listing && !chat) return void res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "not found" }));
    if (mode === "down") return void res.writeHead(503, { "content-type": "application/json" }).end(JSON.stringify({ error: "model is loading" }));
    if (mode === "slow") {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delayMs);
        res.on("close", () => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (res.destroyed || res.writableEnded) return;
    }
    const models = [model, ...(options.models ?? [])];
    if (listing) {
      const body = call.api === "ollama" ? { models: models.map((name) => ({ name, model: name, size: 1, digest: "0", details: {} })) } : { object: "list", data: models.map((id) => ({ id, object: "model", owned_by: "fake" })) };
      return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    }
    const content = answerFor(call);
    const now = new Date().toISOString();
    if (call.stream && (mode === "stream-error" || mode === "stream-cut" || mode === "stream-stall")) return streamFault(res, call, content, now);
    if (mode === "unstreamed") call.stream = false;
    if (call.api === "ollama") {
      if (!call.stream) {
        return void res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({ model, created_at: now, message: { role: "assistant", content }, done: true, done_reason: "stop", prompt_eval_count: tokens.prompt, eval_count: tokens.completion }),
        );
      }
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      for (const piece of chunks(content)) res.write(`${JSON.stringify({ model, created_at: now, message: { role: "assistant", content: piece }, done: false })}\n`);
      return void res.end(`${JSON.stringify({ model, created_at: now, message: { role: "assistant", content: "" }, done: true, done_reason: "stop", prompt_eval_count: tokens.prompt, eval_count: tokens.completion })}\n`);
    }
    const usage = { prompt_tokens: tokens.prompt, completion_tokens: tokens.completion, total_tokens: tokens.prompt + tokens.completion };
    if (!call.stream) {
      return void res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({ id: "cmpl-1", object: "chat.completion", created: 0, model, choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }], usage }),
      );
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (const piece of chunks(content)) res.write(`data: ${JSON.stringify({ id: "cmpl-1", object: "chat.completion.chunk", model, choices: [{ index: 0, delta: { content: piece } }] })}\n\n`);
    res.write(`data: ${JSON.stringify({ id: "cmpl-1", object: "chat.completion.chunk", model, choices: [], usage })}\n\n`);
    res.end("data: [DONE]\n\n");
  }

  /** The first piece of a streamed answer, then the fault the mode names. */
  async function streamFault(res: ServerResponse, call: ReceivedCall, content: string, now: string): Promise<void> {
    const first = chunks(content)[0] ?? "";
    if (call.api === "ollama") {
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      res.write(`${JSON.stringify({ model, created_at: now, message: { role: "assistant", content: first }, done: false })}\n`);
      if (mode === "stream-error") return void res.end(`${JSON.stringify({ error: "model runner has unexpectedly stopped" })}\n`);
    } else {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify({ id: "cmpl-1", object: "chat.completion.chunk", model, choices: [{ index: 0, delta: { content: first } }] })}\n\n`);
      if (mode === "stream-error") {
        res.write(`data: ${JSON.stringify({ object: "error", message: "The engine died mid-generation", type: "InternalServerError", code: 500 })}\n\n`);
        return void res.end("data: [DONE]\n\n");
      }
    }
    if (mode === "stream-cut") return void res.end();
    await new Promise<void>((resolve) => res.on("close", resolve));
  }

  const server = createServer((req, res) => {
    void (async () => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      const text = await readBody(req);
      let body: Record<string, unknown> | undefined;
      try {
        body = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
      } catch {
        body = undefined;
      }
      const api = path.startsWith("/v1/") ? "openai" : "ollama";
      const format = body?.format as Record<string, unknown> | undefined;
      const responseFormat = body?.response_format as { json_schema?: { schema?: Record<string, unknown> } } | undefined;
      const call: ReceivedCall = {
        api,
        path,
        method: req.method ?? "GET",
        headers: req.headers,
        body,
        stream: body?.stream === true,
        schema: api === "ollama" ? (typeof format === "object" ? format : undefined) : responseFormat?.json_schema?.schema,
        messages: (body?.messages as ReceivedCall["messages"] | undefined) ?? [],
        aborted: false,
      };
      if (keep > 0) received.push(call);
      if (received.length > keep) received.splice(0, received.length - keep);
      res.on("close", () => {
        if (!res.writableFinished) {
          call.aborted = true;
          for (const w of abortWaiters.splice(0)) w(call);
        }
      });
      await handle(req, res, call);
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    received,
    chats: () => received.filter((c) => c.path === "/api/chat" || c.path === "/v1/chat/completions"),
    embeds: () => received.filter((c) => c.path === "/api/embed" || c.path === "/v1/embeddings"),
    setEmbedMode(next, opts) {
      embedMode = next;
      if (opts?.delayMs !== undefined) embedDelayMs = opts.delayMs;
    },
    setMode(next, opts) {
      mode = next;
      embedMode = next;
      if (opts?.delayMs !== undefined) delayMs = embedDelayMs = opts.delayMs;
      if (opts?.length !== undefined) stretchTo = opts.length;
    },
    embedWith: (fn) => void (embedder = fn ?? fakeEmbedding),
    script: (...answers) => void queue.push(...answers),
    respond: (fn) => void (responder = fn),
    waitForAbort(timeoutMs = 5_000) {
      const done = received.find((c) => c.aborted);
      if (done) return Promise.resolve(done);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no aborted call within the time")), timeoutMs);
        abortWaiters.push((call) => {
          clearTimeout(timer);
          resolve(call);
        });
      });
    },
    reset() {
      received.length = 0;
      queue = [];
      responder = undefined;
      embedder = fakeEmbedding;
      mode = options.mode ?? "ok";
      delayMs = options.delayMs ?? 10_000;
      embedMode = mode;
      embedDelayMs = delayMs;
      stretchTo = 2_000;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
