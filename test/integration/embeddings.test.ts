import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createInferenceClient, InferenceError, type InferenceClient } from "../../src/services/inference";
import { buildIndex } from "../../src/services/kb/retrieval";
import { makeSnapshot } from "../../src/services/kb/snapshot";
import { createEmbeddingState, EMBED_BATCH, packVectors, queryVector, sectionVectors, unit, type Vector } from "../../src/services/kb/vectors";
import { createMemoryBlobStore } from "../../src/services/kb/blob-store";
import { relevantHits, STRONG_COSINE } from "../../src/services/support/relevance";
import { fixedClock, buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { startFakeInference, type FakeInference, type ReceivedCall } from "../support/fake-inference";
import { ENTERPRISE, signIn, type Person } from "../support/people";
import { json } from "../support/users";

const EMBED_MODEL = "bge-m3";
let host: FakeInference;
let second: FakeInference;
beforeAll(async () => {
  host = await startFakeInference({ models: [EMBED_MODEL] });
  second = await startFakeInference({ models: [EMBED_MODEL] });
});
afterAll(async () => {
  await host.close();
  await second.close();
});
beforeEach(() => {
  host.reset();
  second.reset();
});

const client = (api: "ollama" | "openai", options: { hosts?: string[]; embedModel?: string; timeoutMs?: number } = {}): InferenceClient =>
  createInferenceClient({ api, hosts: options.hosts ?? [host.url], model: "fake-model:1b", embedModel: options.embedModel ?? EMBED_MODEL, fetch, clock: fixedClock(Date.now()), timeoutMs: options.timeoutMs ?? 2_000, cooldownMs: 1_000 });

const dot = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

/** Waits for work started in the background (section vectors) without a fixed sleep. */
async function eventually<T>(probe: () => T | undefined | Promise<T | undefined>, ms = 5_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("embedding call on the inference port", () => {
  it.each(["ollama", "openai"] as const)("%s: one vector per input, in order, from the configured model", async (api) => {
    const result = await client(api).embed!({ input: ["refund of coins", "profile photos", "reimbursement"] });
    expect(result.embeddings).toHaveLength(3);
    expect(result.model).toBe(EMBED_MODEL);
    expect(result.host).toBe(host.url);
    const [call] = host.embeds();
    expect(call!.path).toBe(api === "ollama" ? "/api/embed" : "/v1/embeddings");
    expect(call!.body).toMatchObject({ model: EMBED_MODEL, input: ["refund of coins", "profile photos", "reimbursement"] });
    // The fake's vectors put synonyms together: "reimbursement" is near "refund", not "photos".
    const [refund, photos, reimbursement] = result.embeddings as [number[], number[], number[]];
    expect(dot(refund, reimbursement)).toBeGreaterThan(0.5);
    expect(dot(photos, reimbursement)).toBeLessThan(0.1);
  });

  it("without an embedding model the client offers no embed", () => {
    const plain = createInferenceClient({ api: "ollama", hosts: [host.url], model: "m", fetch, clock: fixedClock(0) });
    expect(plain.embed).toBeUndefined();
    expect(plain.embedModel).toBeUndefined();
  });

  it.each(["ollama", "openai"] as const)("%s: a host without the model is remembered and not asked again per call", async (api) => {
    const c = client(api, { embedModel: "not-installed" });
    await expect(c.embed!({ input: ["a question"] })).rejects.toMatchObject({ reason: "unavailable" });
    await expect(c.embed!({ input: ["another"] })).rejects.toBeInstanceOf(InferenceError);
    expect(host.embeds()).toHaveLength(1);
  });

  it("fails over to the next host when the first is down, slow or answers garbage", async () => {
    for (const mode of ["down", "garbage", "slow"] as const) {
      host.reset();
      second.reset();
      host.setEmbedMode(mode, { delayMs: 5_000 });
      const c = client("openai", { hosts: [host.url, second.url], timeoutMs: 300 });
      const result = await c.embed!({ input: ["hello there"] });
      expect(result.host).toBe(second.url);
      expect(host.embeds()).toHaveLength(1);
    }
  });

  it("every host failing is a 503-kind InferenceError; the caller's abort is 'aborted'", async () => {
    host.setEmbedMode("down");
    await expect(client("ollama").embed!({ input: ["x"] })).rejects.toMatchObject({ reason: "unavailable" });
    host.setEmbedMode("slow", { delayMs: 5_000 });
    const controller = new AbortController();
    const pending = client("ollama").embed!({ input: ["x"], signal: controller.signal });
    await eventually(() => (host.embeds().length === 2 ? true : undefined));
    controller.abort();
    await expect(pending).rejects.toMatchObject({ reason: "aborted" });
  });
});

const sectionsKb = (count: number) =>
  Array.from({ length: count }, (_, i) => `## Topic number ${i}\n\nParagraph about subject${i} and more text ${i}.`).join("\n\n");

describe("section vectors", () => {
  it("are built once per snapshot in batches of 64 while BM25 serves, then reused", async () => {
    const inference = client("ollama");
    const state = createEmbeddingState();
    const snapshot = makeSnapshot({ content: sectionsKb(150), version: 1, updatedAt: new Date().toISOString() }, [], "1:0:");
    expect(snapshot.sections).toHaveLength(150);
    const options = { inference, clock: fixedClock(Date.now()) };
    expect(sectionVectors(state, snapshot, snapshot.sections, options)).toBeUndefined();
    const vectors = await eventually(() => sectionVectors(state, snapshot, snapshot.sections, options));
    expect(vectors.count).toBe(150);
    const calls = host.embeds();
    expect(calls.map((c) => (c.body!.input as string[]).length)).toEqual([EMBED_BATCH, EMBED_BATCH, 150 - 2 * EMBED_BATCH]);
    // Asking again (the next question) costs no call; a new snapshot (new KB version) builds anew.
    sectionVectors(state, snapshot, snapshot.sections, options);
    expect(host.embeds()).toHaveLength(3);
    const next = makeSnapshot({ content: sectionsKb(10), version: 2, updatedAt: new Date().toISOString() }, [], "2:0:");
    await eventually(() => sectionVectors(state, next, next.sections, options));
    expect(host.embeds()).toHaveLength(4);
  });

  it("a failed build leaves retrieval on BM25 and is retried after a rest, not per question", async () => {
    host.setEmbedMode("down");
    const clock = fixedClock(1_000_000);
    const state = createEmbeddingState();
    const options = { inference: client("ollama"), clock };
    const snapshot = makeSnapshot({ content: sectionsKb(3), version: 1, updatedAt: new Date().toISOString() }, [], "s");
    sectionVectors(state, snapshot, snapshot.sections, options);
    await eventually(() => (host.embeds().length === 1 ? true : undefined));
    await new Promise((r) => setTimeout(r, 50));
    for (let i = 0; i < 5; i++) expect(sectionVectors(state, snapshot, snapshot.sections, options)).toBeUndefined();
    expect(host.embeds()).toHaveLength(1);
    host.setEmbedMode("ok");
    clock.advance(61_000);
    sectionVectors(state, snapshot, snapshot.sections, options);
    expect((await eventually(() => sectionVectors(state, snapshot, snapshot.sections, options))).count).toBe(3);
  });
});

const KB = [
  "# Billing",
  "## Refunds",
  "Refunds of unused coins: ask for a refund within 14 days.",
  "## Buying coins",
  "Buy coins with a card or mobile money from the wallet page.",
  "# Account",
  "## Profile photos",
  "Upload up to six photos to your profile.",
  "# Safety",
  "## Blocking someone",
  "Block a member from their profile; they are not told.",
].join("\n\n");

describe("blended retrieval", () => {
  const setup = async () => {
    const inference = client("ollama");
    const snapshot = makeSnapshot({ content: KB, version: 1, updatedAt: new Date().toISOString() }, [], "kb");
    const index = await buildIndex(snapshot.sections);
    const clock = fixedClock(Date.now());
    const state = createEmbeddingState();
    const vectors = await eventually(() => sectionVectors(state, snapshot, snapshot.sections, { inference, clock }));
    const semantic = async (q: string) => ({ vectors, sections: snapshot.sections, query: (await queryVector(state, inference, q, { clock, timeoutMs: 1_000 })) as Vector });
    return { index, semantic };
  };

  it("finds a section by meaning that BM25 cannot (a synonym), and only with embeddings", async () => {
    const { index, semantic } = await setup();
    expect(relevantHits(index, "reimbursement", 4)).toEqual([]);
    const hits = relevantHits(index, "reimbursement", 4, await semantic("reimbursement"));
    expect(hits.map((h) => h.section.title)).toEqual(["Refunds"]);
  });

  it("keeps BM25's answers and their order where the words match", async () => {
    const { index, semantic } = await setup();
    const bm25 = relevantHits(index, "how do I block someone", 4);
    const blended = relevantHits(index, "how do I block someone", 4, await semantic("how do I block someone"));
    expect(bm25[0]!.section.title).toBe("Blocking someone");
    expect(blended[0]!.section.title).toBe("Blocking someone");
  });

  it("a weak cosine alone does not make an unrelated section relevant: nothing found", async () => {
    const { index, semantic } = await setup();
    expect(relevantHits(index, "quantum chromodynamics homework", 4, await semantic("quantum chromodynamics homework"))).toEqual([]);
    // Vectors placed by hand: with no word in common, a section needs cosine ≥ STRONG_COSINE.
    const snapshot = makeSnapshot({ content: KB, version: 1, updatedAt: new Date().toISOString() }, [], "kb");
    const at = (cos: number) => unit([cos, Math.sqrt(1 - cos * cos)]);
    const query = unit([1, 0]);
    const weak = packVectors(snapshot.sections.map((_, i) => at(i === 0 ? STRONG_COSINE - 0.05 : 0)));
    expect(relevantHits(index, "zzz", 4, { vectors: weak, sections: snapshot.sections, query })).toEqual([]);
    const strong = packVectors(snapshot.sections.map((_, i) => at(i === 0 ? STRONG_COSINE + 0.05 : 0)));
    expect(relevantHits(index, "zzz", 4, { vectors: strong, sections: snapshot.sections, query }).map((h) => h.section.title)).toEqual([snapshot.sections[0]!.title]);
  });
});

interface Result {
  response: string;
  escalate: boolean;
  citations: { title: string; source: string }[];
}

describe("support chat with embeddings", () => {
  const env = useTestEnvironment();
  const setup = async (extra: Record<string, string> = {}) => {
    const t = buildTestApp({
      database: env.db.database,
      issuer: env.issuer,
      tierLookup: ENTERPRISE,
      env: { INFERENCE_URL: host.url, INFERENCE_API: "ollama", INFERENCE_TIMEOUT_MS: "2000", INFERENCE_COOLDOWN_MS: "100", INFERENCE_EMBED_MODEL: EMBED_MODEL, INFERENCE_EMBED_TIMEOUT_MS: "300", ...extra },
      deps: { blobs: createMemoryBlobStore() },
    });
    const admin = await signIn(t, env.issuer, { admin: true });
    const put = await t.request("/api/v1/kb", { method: "PUT", headers: { ...admin.headers, "content-type": "application/json" }, body: JSON.stringify({ content: KB }) });
    expect(put.status).toBe(200);
    // A model that answers from the first section it was shown and cites it.
    host.respond((call: ReceivedCall) => {
      const user = call.messages.find((m) => m.role === "user")?.content ?? "";
      const title = /<DATA-[0-9a-f]+ name="S1">\n([^\n]*)/.exec(user)?.[1] ?? "nothing";
      return { response: `See ${title}.`, citations: ["S1"], escalate: false, ticketHint: "question" };
    });
    return { t, user: await signIn(t, env.issuer) };
  };
  const ask = async (t: TestApp, who: Person, message: string, language = "en") => {
    const res = await t.request("/api/v1/ai-agents/support/chat", json({ message, language }, who.headers));
    expect(res.status).toBe(200);
    return { via: res.headers.get("x-support-answer"), body: (await res.json()) as Result };
  };

  it("cites the section the blend found once the section vectors are ready", async () => {
    const { t, user } = await setup();
    // The first question starts the build; BM25 alone finds nothing for the synonym.
    const first = await ask(t, user, "Reimbursement?");
    expect(first.body.citations).toEqual([]);
    expect(first.body.escalate).toBe(true);
    const later = await eventually(async () => {
      const r = await ask(t, user, "Reimbursement?");
      return r.body.citations.length ? r : undefined;
    });
    expect(later.via).toBe("model");
    expect(later.body.citations).toEqual([{ title: "Refunds", source: "kb#billing/refunds" }]);
    expect(later.body.response).toBe("See Refunds.");
    expect(later.body.escalate).toBe(false);
  });

  it("a question in the member's language finds the English section by meaning", async () => {
    const { t, user } = await setup();
    // "marejesho" (Swahili: refund) is not in the glossary, so BM25 cannot place it.
    expect((await ask(t, user, "Marejesho?", "sw")).body.citations).toEqual([]);
    const later = await eventually(async () => {
      const r = await ask(t, user, "Marejesho?", "sw");
      return r.body.citations.length ? r : undefined;
    });
    expect(later.body.citations[0]?.title).toBe("Refunds");
    const question = host.embeds().at(-1)!;
    expect(question.body!.input).toEqual(["Marejesho?"]);
  });

  it("without INFERENCE_EMBED_MODEL: BM25 alone, no embedding call", async () => {
    const { t, user } = await setup({ INFERENCE_EMBED_MODEL: "" });
    for (let i = 0; i < 3; i++) expect((await ask(t, user, "Reimbursement?")).body.citations).toEqual([]);
    expect((await ask(t, user, "how do I block someone")).body.citations[0]?.title).toBe("Blocking someone");
    expect(host.embeds()).toEqual([]);
  });

  it("a host without the embedding model: BM25 alone, asked once rather than per question", async () => {
    const { t, user } = await setup({ INFERENCE_EMBED_MODEL: "not-installed" });
    for (let i = 0; i < 4; i++) expect((await ask(t, user, "how do I block someone")).body.citations[0]?.title).toBe("Blocking someone");
    expect(host.embeds()).toHaveLength(1);
  });

  it.each(["slow", "down", "garbage"] as const)("question embedding %s: the answer still comes, from BM25, within the timeout", async (mode) => {
    const { t, user } = await setup();
    await ask(t, user, "warm up");
    await eventually(async () => ((await ask(t, user, "Reimbursement?")).body.citations.length ? true : undefined));
    host.setEmbedMode(mode, { delayMs: 10_000 });
    const answer = await ask(t, user, "how do I block someone");
    // The host would take 10 s: the question's own deadline (300 ms) hung up on it instead.
    if (mode === "slow") expect((await host.waitForAbort()).path).toBe("/api/embed");
    expect(answer.via).toBe("model");
    expect(answer.body.citations[0]?.title).toBe("Blocking someone");
    // Later questions skip the failing embedding instead of each waiting for it.
    const calls = host.embeds().length;
    await ask(t, user, "how do I block someone");
    expect(host.embeds()).toHaveLength(calls);
  });
});
