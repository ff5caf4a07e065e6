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

type Doc = { i: number; title: string; path: string; text: string };

/** MiniSearch's own tokenizer: split on whitespace and punctuation. */
const SPLIT = /[\n\r\p{Z}\p{P}]+/u;
/** The most distinct words of one question that are searched; a long message is cut to its rarest. */
const MAX_QUERY_TERMS = 10;
/** Words in more than this share of sections say little (BM25 weighs them near zero) and cost most. */
const COMMON_SHARE = 0.05;

/** Terms of a query are processed already. */
const VERBATIM = { processTerm: (t: string) => t, tokenize: (q: string) => [q] };

/** MiniSearch plus the document frequency of a term, which it keeps but does not expose. */
class SectionSearch extends MiniSearch<Doc> {
  documentFrequency(term: string): number {
    const fields = this._index.get(term);
    if (!fields) return 0;
    let most = 0;
    for (const docs of fields.values()) most = Math.max(most, docs.size);
    return most;
  }
}

/**
 * BM25 over every section (title and the headings above it weigh more than body text). Built once
 * per snapshot of the knowledge base. A query keeps its rarest words (at most 10) and drops words
 * found in most sections are matched against headings only, so its cost stays bounded however
 * large the knowledge base or the question.
 */
export async function buildIndex(sections: Section[]): Promise<SectionIndex> {
  const search = new SectionSearch({
    idField: "i",
    fields: ["title", "path", "text"],
    processTerm,
    searchOptions: { boost: { title: 3, path: 1.5, text: 1 }, combineWith: "OR" },
  });
  // In chunks that yield between them: a large knowledge base takes seconds to index, and the
  // instance keeps serving other requests meanwhile.
  await search.addAllAsync(
    sections.map((s, i) => ({ i, title: s.title, path: s.path.join(" "), text: s.text })),
    { chunkSize: 200 },
  );
  // A small knowledge base is cheap to search in full, and there every word matters.
  const common = Math.max(50, sections.length * COMMON_SHARE);

  /** The query's known words, rarest first, split into rare ones and ones most sections contain. */
  const queryTerms = (query: string): { rare: string[]; common: string[] } => {
    const unique = new Set<string>();
    for (const token of expandQuery(query).split(SPLIT)) {
      const term = token ? processTerm(token) : null;
      if (term) unique.add(term);
    }
    const known = [...unique].map((term) => ({ term, df: search.documentFrequency(term) })).filter((t) => t.df > 0);
    known.sort((a, b) => a.df - b.df);
    return {
      rare: known.filter((t) => t.df <= common).slice(0, MAX_QUERY_TERMS).map((t) => t.term),
      common: known.filter((t) => t.df > common).slice(0, 4).map((t) => t.term),
    };
  };

  return {
    size: sections.length,
    search(query, limit) {
      const { rare, common: frequent } = queryTerms(query);
      if (rare.length === 0 && frequent.length === 0) return [];
      // Words most sections contain still count where a heading carries them; scoring them over
      // every body would touch most of the index for almost no change in ranking.
      const results = search.search({
        combineWith: "OR",
        queries: [
          // Longer words also match as prefixes ("recover" finds "recovery"); short prefixes would fan out.
          ...(rare.length ? [{ queries: rare, prefix: (term: string) => term.length >= 6, ...VERBATIM }] : []),
          ...(frequent.length ? [{ queries: frequent, fields: ["title"], ...VERBATIM }] : []),
        ],
      });
      const hits: Hit[] = [];
      for (const r of results) {
        if (hits.length >= limit) break;
        hits.push({ section: sections[r.id as number]!, score: r.score });
      }
      return hits;
    },
  };
}
