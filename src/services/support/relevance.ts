import type { Hit, SectionIndex } from "../kb/retrieval";
import type { Section } from "../kb/sections";
import { similarities, type Vector, type VectorSet } from "../kb/vectors";

/**
 * Below this share of the top score a section is noise: it shares a word or two with the
 * question but is about something else.
 */
const RELATIVE_FLOOR = 0.35;
/** A top hit scoring under this matched only incidental words: treated as "nothing found". */
const ABSOLUTE_FLOOR = 6;

/** BM25 candidates looked at before blending; the blend may reorder beyond the final few. */
const BM25_CANDIDATES = 50;
/** Half lexical, half semantic: neither signal is trusted more than the other on its own. */
const BM25_WEIGHT = 0.5;
const COSINE_WEIGHT = 0.5;
/**
 * Cosine at or below this is what unrelated texts score with a dense multilingual model such as
 * bge-m3 (≈0.3–0.45); the range above it is stretched to 0–1 so the two signals weigh alike.
 * `npm run eval -- --feature retrieval` measures both constants against a host's embedding model.
 */
export const COSINE_BASELINE = 0.35;
/** A section with no lexical evidence counts as relevant only from this cosine up: a clear paraphrase. */
export const STRONG_COSINE = 0.6;

export interface Semantic {
  /** One per section of the index, in the index's section order. */
  vectors: VectorSet;
  sections: readonly Section[];
  query: Vector;
}

/**
 * The sections worth showing for a question, best first; empty when nothing is relevant.
 *
 * BM25 alone: the top hit must score ABSOLUTE_FLOOR, the others RELATIVE_FLOOR of it.
 * Blended (section and query vectors at hand): a section is kept when BM25 would keep it, or when
 * its cosine reaches STRONG_COSINE; a weak cosine alone never makes a section relevant, so a
 * question nothing answers still comes back empty and escalates. Kept sections are ordered by
 * 0.5 × BM25 / top BM25 + 0.5 × cosine stretched above COSINE_BASELINE. A weighted sum of
 * normalised scores rather than reciprocal-rank fusion: rank fusion gives the best of a flat,
 * weak list the same credit as a clear winner, while the scores keep how strong a match is.
 */
export function relevantHits(index: SectionIndex, query: string, limit: number, semantic?: Semantic): Hit[] {
  if (!semantic) {
    const hits = index.search(query, limit);
    const top = hits[0]?.score ?? 0;
    if (top < ABSOLUTE_FLOOR) return [];
    return hits.filter((h) => h.score >= top * RELATIVE_FLOOR);
  }
  const lexical = index.search(query, Math.max(limit, BM25_CANDIDATES));
  const top = lexical[0]?.score ?? 0;
  const lexicalShare = new Map<Section, number>();
  if (top >= ABSOLUTE_FLOOR) for (const h of lexical) if (h.score >= top * RELATIVE_FLOOR) lexicalShare.set(h.section, h.score / top);

  const scored: Hit[] = [];
  const { sections } = semantic;
  const cosines = similarities(semantic.vectors, semantic.query);
  for (let i = 0; i < cosines.length; i++) {
    const section = sections[i];
    if (!section) continue;
    const cos = cosines[i] ?? 0;
    const share = lexicalShare.get(section);
    if (share === undefined && cos < STRONG_COSINE) continue;
    const stretched = Math.max(0, (cos - COSINE_BASELINE) / (1 - COSINE_BASELINE));
    scored.push({ section, score: BM25_WEIGHT * (share ?? 0) + COSINE_WEIGHT * stretched });
  }
  scored.sort((a, b) => b.score - a.score);
  return scored.slice(0, limit);
}
