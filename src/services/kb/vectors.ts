import type { Clock } from "../../platform/clock";
import type { Logger } from "../../platform/logger";
import type { InferenceClient } from "../inference/types";
import type { Section } from "./sections";

/** Sections per embedding call: large enough to amortise the round trip, small enough for one host batch. */
export const EMBED_BATCH = 64;
/** What of a section is embedded: its headings and the start of its text (the lead carries the topic). */
const MAX_EMBED_CHARS = 2_000;
/** A build that failed (host down, no model) is tried again after this. */
const RETRY_MS = 60_000;
/** A build not finished after this is taken as lost (a Worker may drop work left after a response). */
const STALE_MS = 10 * 60_000;

/** Unit-length vectors, so cosine similarity is a dot product. */
export type Vector = Float32Array;

export function unit(values: readonly number[]): Vector {
  const v = Float32Array.from(values);
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum) || 1;
  for (let i = 0; i < v.length; i++) v[i]! /= norm;
  return v;
}

/** Many unit vectors of one dimension, row after row in one array (one allocation, sequential reads). */
export interface VectorSet {
  readonly dim: number;
  readonly count: number;
  readonly data: Float32Array;
}

export function packVectors(vectors: readonly Vector[]): VectorSet {
  const dim = vectors[0]?.length ?? 0;
  if (vectors.some((v) => v.length !== dim)) throw new Error("vectors of different dimensions");
  const data = new Float32Array(vectors.length * dim);
  vectors.forEach((v, i) => data.set(v, i * dim));
  return { dim, count: vectors.length, data };
}

/**
 * The cosine of the query with every vector of the set (all zero when the dimensions differ,
 * e.g. after the model changed). An exact scan, one dot product per row: about 3 ms for a 2 MB KB,
 * which an approximate index would not shorten noticeably beside the model's answer
 * (docs/design/performance.md).
 */
export function similarities(set: VectorSet, query: Vector): Float32Array {
  const out = new Float32Array(set.count);
  const { dim, data } = set;
  if (query.length !== dim) return out;
  for (let r = 0; r < set.count; r++) {
    const base = r * dim;
    let sum = 0;
    for (let i = 0; i < dim; i++) sum += data[base + i]! * query[i]!;
    out[r] = sum;
  }
  return out;
}

export function embeddingText(section: Section): string {
  return [...section.path, section.title].join(" › ").concat("\n\n", section.text).slice(0, MAX_EMBED_CHARS);
}

interface Build {
  startedAt: number;
  vectors?: VectorSet;
  failedAt?: number;
}

/** One app instance's embeddings (src/services/kb/runtime.ts). */
export interface EmbeddingState {
  /** Per snapshot (KB version + asset set) and embedding model: the section vectors. */
  readonly builds: WeakMap<object, Map<string, Build>>;
  /** Until when questions skip their embedding after one failed (epoch ms). */
  queryRestUntil: number;
}

export function createEmbeddingState(): EmbeddingState {
  return { builds: new WeakMap(), queryRestUntil: 0 };
}

export interface SectionVectorsOptions {
  inference: InferenceClient;
  clock: Clock;
  logger?: Logger;
  /** Keeps the build alive after the response (Workers' waitUntil); Node lets it run anyway. */
  background?: (work: Promise<unknown>) => void;
}

/**
 * The snapshot's section vectors when they are ready, else undefined, starting (or restarting
 * after a failure) their build in the background: BM25 serves at once and the blend switches on
 * when the vectors arrive. Batches go one after another so a rebuild never floods the host.
 */
export function sectionVectors(state: EmbeddingState, snapshot: object, sections: readonly Section[], options: SectionVectorsOptions): VectorSet | undefined {
  const { inference, clock } = options;
  const { builds } = state;
  const model = inference.embedModel;
  if (!model || !inference.embed || sections.length === 0) return undefined;
  let perModel = builds.get(snapshot);
  if (!perModel) builds.set(snapshot, (perModel = new Map()));
  const existing = perModel.get(model);
  if (existing?.vectors) return existing.vectors;
  const now = clock.now();
  const busy = existing && existing.failedAt === undefined && now - existing.startedAt < STALE_MS;
  const resting = existing?.failedAt !== undefined && now - existing.failedAt < RETRY_MS;
  if (busy || resting) return undefined;

  const build: Build = { startedAt: now };
  perModel.set(model, build);
  const work = (async () => {
    const vectors: Vector[] = [];
    for (let i = 0; i < sections.length; i += EMBED_BATCH) {
      const batch = sections.slice(i, i + EMBED_BATCH).map(embeddingText);
      const { embeddings } = await inference.embed!({ input: batch });
      for (const e of embeddings) vectors.push(unit(e));
    }
    build.vectors = packVectors(vectors);
    options.logger?.info("section embeddings ready", { model, sections: sections.length, ms: clock.now() - now });
  })().catch((err: unknown) => {
    build.failedAt = clock.now();
    options.logger?.warn("section embeddings failed; retrieval stays on BM25", { model, error: err instanceof Error ? err.message : String(err) });
  });
  options.background?.(work);
  return undefined;
}

/** After a question's embedding failed, questions skip it for this long rather than each wait out the timeout. */
const QUERY_REST_MS = 30_000;

/** The question's vector within `timeoutMs`, or undefined on any failure (retrieval then uses BM25 alone). */
export async function queryVector(
  state: EmbeddingState,
  inference: InferenceClient,
  query: string,
  options: { clock: Clock; timeoutMs: number; signal?: AbortSignal },
): Promise<Vector | undefined> {
  if (!inference.embedModel || !inference.embed) return undefined;
  if (state.queryRestUntil > options.clock.now()) return undefined;
  // One deadline over every host attempt, as the caller's abort: an embedding slower than the
  // question can wait for is not a host failure, so it must not cool the host down for chat.
  const deadline = AbortSignal.timeout(options.timeoutMs);
  try {
    const { embeddings } = await inference.embed({ input: [query], signal: options.signal ? AbortSignal.any([options.signal, deadline]) : deadline });
    return embeddings[0] ? unit(embeddings[0]) : undefined;
  } catch {
    if (!options.signal?.aborted) state.queryRestUntil = options.clock.now() + QUERY_REST_MS;
    return undefined;
  }
}
