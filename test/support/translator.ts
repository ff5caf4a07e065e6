import type { ReceivedCall } from "./fake-inference";

/**
 * A stand-in translation model for the fake inference host: it reads the batch's English strings
 * from the prompt's `source_strings` block and answers each key as `«<code>» <English text>`,
 * placeholders and tags intact. `spoil` may change a key's answer (to drop a placeholder).
 */
export function translator(spoil: (key: string, text: string, call: ReceivedCall) => string = (_k, text) => text): (call: ReceivedCall) => Record<string, string> {
  return (call) => {
    const system = call.messages[0]?.content ?? "";
    const user = call.messages[1]?.content ?? "";
    const code = /language code "([^"]+)"/.exec(system)?.[1] ?? "??";
    const block = /name="source_strings">\n([\s\S]*?)\n<\//.exec(user)?.[1] ?? "{}";
    const source = JSON.parse(block) as Record<string, string>;
    return Object.fromEntries(Object.entries(source).map(([key, text]) => [key, spoil(key, `«${code}» ${text}`, call)]));
  };
}

/** The keys a seeding call asked for, from the JSON schema it sent. */
export function askedKeys(call: ReceivedCall): string[] {
  return Object.keys((call.schema?.properties ?? {}) as Record<string, unknown>).sort();
}
