import { createParser, type EventSourceMessage } from "eventsource-parser";
import { deliver, type AdapterCall, type AdapterReply, type InferenceAdapter, type TokenUsage } from "./types";

interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
}

interface Completion {
  model?: string;
  choices?: { message?: { content?: string | null }; delta?: { content?: string | null } }[];
  usage?: Usage | null;
}

export class HostHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "HostHttpError";
  }
}

function usage(u: Usage | null | undefined): TokenUsage {
  const prompt = u?.prompt_tokens ?? 0;
  const completion = u?.completion_tokens ?? 0;
  return { prompt, completion, total: u?.total_tokens ?? prompt + completion };
}

/**
 * The OpenAI-compatible chat API that vLLM (and llama.cpp, TGI…) serve. Structured output goes
 * as `response_format: {type: "json_schema"}`, which vLLM enforces with guided decoding.
 */
export function openaiAdapter(options: { fetch: typeof fetch; apiKey?: string }): InferenceAdapter {
  const headers = (json: boolean): Record<string, string> => ({
    ...(json ? { "content-type": "application/json" } : {}),
    ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
  });

  async function send(url: string, init: RequestInit): Promise<Response> {
    const res = await options.fetch(url, init);
    if (!res.ok) {
      const text = await res.text().catch(() => "");
      throw new HostHttpError(res.status, `${url} answered ${res.status}: ${text.slice(0, 200)}`);
    }
    return res;
  }

  return {
    api: "openai",
    async chat(call: AdapterCall): Promise<AdapterReply> {
      const body = {
        model: call.model,
        messages: call.messages,
        stream: call.stream,
        ...(call.stream ? { stream_options: { include_usage: true } } : {}),
        ...(call.temperature === undefined ? {} : { temperature: call.temperature }),
        ...(call.maxTokens === undefined ? {} : { max_tokens: call.maxTokens }),
        ...(call.jsonSchema ? { response_format: { type: "json_schema", json_schema: { name: "answer", schema: call.jsonSchema } } } : {}),
      };
      const res = await send(`${call.host}/v1/chat/completions`, {
        method: "POST",
        headers: { ...headers(true), accept: call.stream ? "text/event-stream" : "application/json" },
        body: JSON.stringify(body),
        signal: call.signal,
      });
      if (!call.stream) {
        const reply = (await res.json()) as Completion;
        return { text: reply.choices?.[0]?.message?.content ?? "", model: reply.model || call.model, tokens: usage(reply.usage) };
      }
      return readStream(res, call);
    },
    async models(host, signal) {
      const res = await send(`${host}/v1/models`, { headers: headers(false), signal });
      const list = (await res.json()) as { data?: { id: string }[] };
      return (list.data ?? []).map((m) => m.id);
    },
  };
}

/**
 * Reads the host's server-sent events. The answer counts only when the stream says it is done
 * ([DONE] or a finish_reason): a stream cut short, or one carrying an error event (how vLLM
 * reports a failure after its 200), fails the host like any other error. A host that ignored
 * `stream` and sent one JSON reply is taken whole.
 */
async function readStream(res: Response, call: AdapterCall): Promise<AdapterReply> {
  if (!(res.headers.get("content-type") ?? "").toLowerCase().includes("text/event-stream")) {
    const reply = (await res.json()) as Completion;
    const whole = reply.choices?.[0]?.message?.content ?? "";
    if (whole) deliver(call, whole);
    return { text: whole, model: reply.model || call.model, tokens: usage(reply.usage) };
  }
  let text = "";
  let model = call.model;
  let tokens = usage(undefined);
  let finished = false;
  let failure: Error | undefined;
  const parser = createParser({
    onEvent(event: EventSourceMessage) {
      if (failure) return;
      if (event.data === "[DONE]") {
        finished = true;
        return;
      }
      let chunk: Completion & { object?: string; message?: string; error?: { message?: string } | string };
      try {
        chunk = JSON.parse(event.data) as typeof chunk;
      } catch {
        failure = new Error("unparseable stream event");
        return;
      }
      if (event.event === "error" || chunk.object === "error" || chunk.error !== undefined) {
        const detail = typeof chunk.error === "string" ? chunk.error : (chunk.error?.message ?? chunk.message ?? "no detail");
        failure = new Error(`the host reported an error mid-stream: ${String(detail).slice(0, 200)}`);
        return;
      }
      if (chunk.model) model = chunk.model;
      if (chunk.usage) tokens = usage(chunk.usage);
      const choice = chunk.choices?.[0] as { delta?: { content?: string | null }; finish_reason?: string | null } | undefined;
      if (choice?.finish_reason) finished = true;
      const delta = choice?.delta?.content;
      if (delta) {
        text += delta;
        deliver(call, delta);
      }
    },
  });
  if (!res.body) throw new Error("stream without a body");
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let drained = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        drained = true;
        break;
      }
      parser.feed(value);
      if (failure) break;
    }
  } finally {
    // Leaving early (an error event, or the consumer failing) must end the request, or the host
    // goes on generating for nobody.
    if (!drained) await reader.cancel().catch(() => undefined);
  }
  if (failure) throw failure;
  if (!finished) throw new Error("the stream ended before the answer was complete");
  return { text, model, tokens };
}
