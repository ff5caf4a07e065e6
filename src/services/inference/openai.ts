import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { AdapterCall, AdapterReply, InferenceAdapter, TokenUsage } from "./types";

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

async function readStream(res: Response, call: AdapterCall): Promise<AdapterReply> {
  let text = "";
  let model = call.model;
  let tokens = usage(undefined);
  let failure: Error | undefined;
  const parser = createParser({
    onEvent(event: EventSourceMessage) {
      if (event.data === "[DONE]") return;
      let chunk: Completion;
      try {
        chunk = JSON.parse(event.data) as Completion;
      } catch {
        failure = new Error("unparseable stream event");
        return;
      }
      if (chunk.model) model = chunk.model;
      if (chunk.usage) tokens = usage(chunk.usage);
      const delta = chunk.choices?.[0]?.delta?.content;
      if (delta) {
        text += delta;
        call.onDelta?.(delta);
      }
    },
  });
  if (!res.body) throw new Error("stream without a body");
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parser.feed(value);
  }
  if (failure) throw failure;
  return { text, model, tokens };
}
