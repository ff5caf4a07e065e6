import MiniSearch from "minisearch";
import type { Section } from "./sections";
import { expandQuery, processTerm } from "./terms";

export interface Hit {
  section: Section;
  score: number;
}

export interface SectionIndex {
  readonly size: number;
  search(query: string, limit: number): Hit[];
}

/**
 * BM25 over every section (title and the headings above it weigh more than body text). Built once
 * per snapshot of the knowledge base; a search is in-memory and takes well under a millisecond.
 */
export function buildIndex(sections: Section[]): SectionIndex {
  const search = new MiniSearch<{ i: number; title: string; path: string; text: string }>({
    idField: "i",
    fields: ["title", "path", "text"],
    processTerm,
    searchOptions: {
      boost: { title: 3, path: 1.5, text: 1 },
      // Prefixes only for longer words: short prefixes fan out over much of the vocabulary.
      prefix: (term) => term.length >= 5,
      combineWith: "OR",
    },
  });
  search.addAll(sections.map((s, i) => ({ i, title: s.title, path: s.path.join(" "), text: s.text })));
  return {
    size: sections.length,
    search(query, limit) {
      const results = search.search(expandQuery(query));
      const hits: Hit[] = [];
      for (const r of results) {
        if (hits.length >= limit) break;
        hits.push({ section: sections[r.id as number]!, score: r.score });
      }
      return hits;
    },
  };
}
