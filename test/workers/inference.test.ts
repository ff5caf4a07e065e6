import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { systemClock } from "../../src/platform/clock";
import { createInferenceClient } from "../../src/services/inference";

// The inference port inside workerd: the `ollama` browser client, eventsource-parser, the JSON
// schema from zod and the combined abort signals all have to work on the Workers runtime too.
const worker = exports.default;
const url = String(env.INFERENCE_URL);
const Answer = z.object({ reply: z.string(), score: z.number().min(0).max(1) });

describe("the inference port in workerd", () => {
  it.each(["ollama", "openai"] as const)("asks the %s API, plain and streamed", async (api) => {
    const client = createInferenceClient({ api, hosts: [url], model: "m", fetch: globalThis.fetch.bind(globalThis), clock: systemClock });
    const plain = await client.generate({ messages: [{ role: "user", content: "hi" }], schema: Answer, signal: new AbortController().signal });
    expect(plain).toMatchObject({ model: "workerd-test:1b", tokens: { total: 18 }, attempts: 1 });
    const pieces: string[] = [];
    const streamed = await client.generate({ messages: [{ role: "user", content: "hi" }], schema: Answer, onDelta: (t) => pieces.push(t) });
    expect(streamed.value).toEqual(plain.value);
    expect(pieces.length).toBeGreaterThan(0);
  });

  it("serves the AI health route from the Worker entry", async () => {
    const res = await worker.fetch("http://api.test/api/v1/ai-agents/health");
    const body = (await res.json()) as { status: string; hosts: { reachable: boolean; servesModel: boolean }[] };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.hosts[0]).toMatchObject({ reachable: true });
  });
});
