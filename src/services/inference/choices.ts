import { z } from "zod";

/**
 * Answers that must come from a known set, built per request. The JSON schema the client sends to
 * the host (Ollama's `format`, the OpenAI-compatible `response_format` that vLLM enforces with
 * guided decoding) names only the allowed values, so constrained decoding cannot produce anything
 * else. Parsing stays lenient: what a host that does not enforce the schema wrote anyway is mapped
 * by `resolve` or dropped, never a reason to reject an otherwise good answer. (The client sends
 * the schema's output side, see `jsonSchemaOf`.)
 */

/**
 * A list of at most `max` distinct items, each one of `values`. With no values, the schema admits
 * only the empty list.
 */
export function choicesOf<T extends string>(values: readonly T[], max: number, resolve: (raw: string) => T | undefined): z.ZodType<T[], unknown> {
  const lenient = z
    .array(z.string().max(200))
    .max(max * 4)
    .transform((raw): string[] => [...new Set(raw.map(resolve).filter((v) => v !== undefined))].slice(0, max));
  // `{maxItems: 0}` over strings rather than `items: {not: {}}`, which grammar-based decoders reject.
  if (values.length === 0) return lenient.pipe(z.array(z.string()).max(0)) as unknown as z.ZodType<T[], unknown>;
  return lenient.pipe(z.array(z.enum(values as unknown as [T, ...T[]])).max(Math.min(max, values.length))) as unknown as z.ZodType<T[], unknown>;
}
