import type { Hit, SectionIndex } from "../kb/retrieval";

/**
 * Below this share of the top score a section is noise: it shares a word or two with the
 * question but is about something else.
 */
const RELATIVE_FLOOR = 0.35;
/** A top hit scoring under this matched only incidental words: treated as "nothing found". */
const ABSOLUTE_FLOOR = 6;

/** The sections worth showing for a question, best first; empty when nothing is relevant. */
export function relevantHits(index: SectionIndex, query: string, limit: number): Hit[] {
  const hits = index.search(query, limit);
  const top = hits[0]?.score ?? 0;
  if (top < ABSOLUTE_FLOOR) return [];
  return hits.filter((h) => h.score >= top * RELATIVE_FLOOR);
}
