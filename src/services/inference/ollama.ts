import { Ollama } from "ollama/browser";
import { deliver, type AdapterCall, type AdapterReply, type InferenceAdapter } from "./types";

function tokens(prompt: number | undefined, completion: number | undefined) {
  const p = prompt ?? 0;
  const c = completion ?? 0;
  return { prompt: p, completion: c, total: p + c };
}

/**
 * Ollama's native API through the official client. The client is built per call around
 * deps.fetch with the call's signal folded in, so a timeout or a departed HTTP client cancels
 * the very request the host is serving (the client's own abort() would end every stream at once).
 */
export function ollamaAdapter(options: { fetch: typeof fetch; apiKey?: string }): InferenceAdapter {
  const client = (host: string, signal: AbortSignal) =>
    new Ollama({
      host,
      headers: options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : undefined,
      fetch: ((input: RequestInfo | URL, init?: RequestInit) =>
        options.fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal })) as typeof fetch,
    });

  return {
    api: "ollama",
    async chat(call: AdapterCall): Promise<AdapterReply> {
      const ollama = client(call.host, call.signal);
      const base = {
        model: call.model,
        messages: call.messages,
        format: call.jsonSchema,
        options: { temperature: call.temperature, num_predict: call.maxTokens },
      };
      if (!call.stream) {
        const reply = await ollama.chat({ ...base, stream: false });
        return { text: reply.message.content, model: reply.model || call.model, tokens: tokens(reply.prompt_eval_count, reply.eval_count) };
      }
      let text = "";
      let model = call.model;
      let usage = tokens(0, 0);
      // The client's iterator throws on an error line and on a stream that ends before `done`.
      const parts = await ollama.chat({ ...base, stream: true });
      try {
        for await (const part of parts) {
          if (part.message?.content) {
            text += part.message.content;
            deliver(call, part.message.content);
          }
          if (part.model) model = part.model;
          if (part.done) usage = tokens(part.prompt_eval_count, part.eval_count);
        }
      } catch (err) {
        // Leaving the loop early does not end the request; the host would go on generating.
        parts.abort();
        throw err;
      }
      return { text, model, tokens: usage };
    },
    async models(host, signal) {
      const list = await client(host, signal).list();
      return list.models.map((m) => m.name);
    },
  };
}
