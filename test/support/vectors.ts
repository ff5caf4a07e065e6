import { unit, type Vector } from "../../src/services/kb/vectors";

/** A seeded generator (mulberry32), so every run sees the same vectors. */
export function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Roughly normal (sum of uniforms), enough to scatter points around a direction. */
function gaussian(random: () => number): number {
  return random() + random() + random() + random() - 2;
}

/**
 * Vectors shaped like a text embedding model's: sections on one topic sit around that topic's
 * direction (cosine ≈ 0.6 with each other, ≈ 0 across topics), and each question is a noisy copy
 * of one section. Uniform random vectors would have no neighbours at all, which is nothing like
 * embedded text and would make any index look useless.
 */
export function topicalVectors(options: { count: number; queries: number; dim: number; topics: number; seed: number }): { sections: Vector[]; queries: Vector[] } {
  const random = seeded(options.seed);
  const { dim } = options;
  const scatter = (around: Vector, spread: number): Vector => {
    const scale = spread / Math.sqrt(dim / 3);
    return unit(Array.from(around, (x) => x + gaussian(random) * scale));
  };
  const topics = Array.from({ length: options.topics }, () => unit(Array.from({ length: dim }, () => gaussian(random))));
  const sections = Array.from({ length: options.count }, () => scatter(topics[Math.floor(random() * topics.length)]!, 0.8));
  const queries = Array.from({ length: options.queries }, () => scatter(sections[Math.floor(random() * sections.length)]!, 0.6));
  return { sections, queries };
}
