import type { LanguageCode } from "../../src/services/ai/languages";
import type { InferenceClient } from "../../src/services/inference";
import { buildIndex } from "../../src/services/kb/retrieval";
import type { Section } from "../../src/services/kb/sections";
import { kbSections } from "../../src/services/kb/snapshot";
import { embeddingText, packVectors, similarities, unit, type Vector } from "../../src/services/kb/vectors";
import { SECTIONS_FOR_MODEL } from "../../src/services/support/agent";
import { COSINE_BASELINE, STRONG_COSINE, relevantHits } from "../../src/services/support/relevance";

/**
 * Retrieval against the host's embedding model: the support agent's own section split, BM25 index
 * and blend (src/services/support/relevance.ts) over a small knowledge base, asked in several
 * languages. A case passes when the answering section is among the sections the agent would give
 * its model, or, for a question the knowledge base cannot answer, when there are none. It also measures where the model puts related and unrelated texts, because the
 * blend's two cosine constants were chosen for bge-m3's range and a different embedding model
 * may need others:
 * - COSINE_BASELINE should sit near the cosine of unrelated texts (it is stretched to 0);
 * - STRONG_COSINE must lie above every unrelated pair: a cosine that high alone makes a section
 *   relevant, so an unrelated pair reaching it would put an off-topic section in a grounded answer.
 */

export interface RetrievalCase {
  id: string;
  language: LanguageCode;
  question: string;
  /** The section that answers it (its slug path under `kb#`), or null: nothing in the KB does. */
  expect: string | null;
}

/** What a real knowledge base holds: English articles under category headings. */
export const RETRIEVAL_KB = `# Billing

## Buying coins
Coins are bought in the app under Wallet, Buy coins, by card, crypto or mobile money. They reach your wallet as soon as the payment provider confirms the payment, usually within a minute.

## Refunds
Unused coins can be returned within 14 days of purchase. Write to support with the payment reference; the amount goes back to the original payment method within 5 to 10 business days.

## Premium plan
Premium costs 500 coins for 30 days and raises your daily winks and request limits. It does not renew by itself: nothing is charged unless you buy it again.

# Account

## Deleting your account
Delete account in your account settings hides your profile at once and removes your profile, matches and messages for good after a 30-day grace period; Restore account during that period cancels the deletion.

## Changing your email address
Your email address comes from your sign-in provider. Change it there; the next sign-in updates it here.

# Matching

## How the discovery feed chooses people
The feed shows people whose wishes fit yours both ways: gender, age range and distance. It ranks them by shared interests and recent activity, and never shows anyone you blocked or already swiped.

## Winks
A wink tells someone you noticed them without a full like. Standard members can send 10 winks per day, Premium members more.

# Safety

## Blocking and reporting
Blocking hides both of you from each other everywhere in the app. Reporting also blocks, and the safety team reviews every report within 24 hours.

# Technical

## Notifications do not arrive
Check that the phone allows notifications for the app and that battery saving does not stop the app in the background.
`;

export const RETRIEVAL_CASES: RetrievalCase[] = [
  { id: "retrieval/en-refund", language: "en", question: "I bought coins I never used, can I get my money back?", expect: "billing/refunds" },
  { id: "retrieval/en-delete", language: "en", question: "How do I get rid of my profile permanently?", expect: "account/deleting-your-account" },
  { id: "retrieval/en-premium", language: "en", question: "What does the premium subscription cost?", expect: "billing/premium-plan" },
  { id: "retrieval/es-refund", language: "es", question: "¿Cómo recupero el dinero de las monedas que no usé?", expect: "billing/refunds" },
  { id: "retrieval/fr-harass", language: "fr", question: "Quelqu'un me harcèle, comment l'empêcher de me voir ?", expect: "safety/blocking-and-reporting" },
  { id: "retrieval/sw-notify", language: "sw", question: "Sipokei arifa kwenye simu yangu", expect: "technical/notifications-do-not-arrive" },
  { id: "retrieval/de-feed", language: "de", question: "Nach welchen Kriterien schlägt mir die App Personen vor?", expect: "matching/how-the-discovery-feed-chooses-people" },
  { id: "retrieval/pt-winks", language: "pt", question: "Quantas piscadelas posso enviar por dia?", expect: "matching/winks" },
  { id: "retrieval/en-nothing", language: "en", question: "Which pizzeria in Naples has the best crust?", expect: null },
  { id: "retrieval/es-nothing", language: "es", question: "¿Qué tiempo hará mañana en Madrid?", expect: null },
];

export function retrievalSections(): Section[] {
  return kbSections({ content: RETRIEVAL_KB, version: 1, updatedAt: new Date(0).toISOString() });
}

export interface CosineSpread {
  count: number;
  min: number;
  median: number;
  p95: number;
  max: number;
}

export interface Calibration {
  /** A question with the section that answers it. */
  related: CosineSpread;
  /** A question with every section that does not answer it. */
  unrelated: CosineSpread;
  baseline: number;
  strong: number;
  /** Unrelated pairs at or above STRONG_COSINE: must be none. */
  unrelatedAtStrong: number;
  /** Questions whose own section scores below STRONG_COSINE: found only with words in common. */
  relatedBelowStrong: number;
  fits: boolean;
  /** What the figures say about the constants, in sentences; empty when both fit. */
  advice: string[];
}

export interface RetrievalOutcome {
  id: string;
  passed: boolean;
  detail?: string;
  ms: number;
}

export interface RetrievalRun {
  outcomes: RetrievalOutcome[];
  /** Absent when the host gave no embeddings. */
  calibration?: Calibration;
}

/** Runs every retrieval case through the support agent's retrieval with the host's embeddings. */
export async function runRetrieval(client: InferenceClient): Promise<RetrievalRun> {
  const started = Date.now();
  const sections = retrievalSections();
  const index = await buildIndex(sections);
  let sectionVectors: Vector[];
  let questionVectors: Vector[];
  try {
    if (!client.embed) throw new Error("no embedding model configured (--embed-model)");
    const [s, q] = await Promise.all([client.embed({ input: sections.map(embeddingText) }), client.embed({ input: RETRIEVAL_CASES.map((c) => c.question) })]);
    sectionVectors = s.embeddings.map(unit);
    questionVectors = q.embeddings.map(unit);
  } catch (err) {
    const detail = `no embeddings: ${err instanceof Error ? err.message : String(err)}`;
    return { outcomes: RETRIEVAL_CASES.map((c) => ({ id: c.id, passed: false, detail, ms: Date.now() - started })) };
  }
  const vectors = packVectors(sectionVectors);
  const outcomes = RETRIEVAL_CASES.map((c, i): RetrievalOutcome => {
    const t = Date.now();
    // What the support agent would hand its model: the answering section must be among them.
    const hits = relevantHits(index, c.question, SECTIONS_FOR_MODEL, { vectors, sections, query: questionVectors[i] as Vector });
    const found = hits.map((h) => h.section.id.replace(/^kb#/, ""));
    const passed = c.expect === null ? found.length === 0 : found.includes(c.expect);
    const detail = passed ? undefined : `expected ${c.expect ?? "nothing"}, found ${found.length ? found.join(", ") : "nothing"}`;
    return { id: c.id, passed, detail, ms: Date.now() - t };
  });
  return { outcomes, calibration: calibrate(sections, vectors, questionVectors) };
}

function calibrate(sections: Section[], vectors: ReturnType<typeof packVectors>, questions: Vector[]): Calibration {
  const related: number[] = [];
  const unrelated: number[] = [];
  RETRIEVAL_CASES.forEach((c, i) => {
    const cosines = similarities(vectors, questions[i] as Vector);
    sections.forEach((s, r) => (s.id === `kb#${c.expect}` ? related : unrelated).push(cosines[r] ?? 0));
  });
  const unrelatedAtStrong = unrelated.filter((x) => x >= STRONG_COSINE).length;
  const relatedBelowStrong = related.filter((x) => x < STRONG_COSINE).length;
  const spreadRelated = spread(related);
  const spreadUnrelated = spread(unrelated);
  const advice: string[] = [];
  if (unrelatedAtStrong > 0) {
    advice.push(`${unrelatedAtStrong} unrelated pairs reach STRONG_COSINE ${STRONG_COSINE}: raise it above ${spreadUnrelated.max.toFixed(2)} for this model`);
  }
  if (Math.abs(spreadUnrelated.median - COSINE_BASELINE) > 0.15) {
    advice.push(`unrelated texts score a median ${spreadUnrelated.median.toFixed(2)} with this model, far from COSINE_BASELINE ${COSINE_BASELINE}: set it near that median`);
  }
  return {
    related: spreadRelated,
    unrelated: spreadUnrelated,
    baseline: COSINE_BASELINE,
    strong: STRONG_COSINE,
    unrelatedAtStrong,
    relatedBelowStrong,
    fits: advice.length === 0,
    advice,
  };
}

function spread(values: number[]): CosineSpread {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { count: sorted.length, min: sorted[0] ?? 0, median: at(0.5), p95: at(0.95), max: sorted[sorted.length - 1] ?? 0 };
}

export function formatCalibration(c: Calibration): string[] {
  const f = (x: number) => x.toFixed(2);
  return [
    "retrieval calibration (cosines of the host's embedding model):",
    `  a question with its own section   (${c.related.count}): min ${f(c.related.min)}  median ${f(c.related.median)}  max ${f(c.related.max)}; below STRONG_COSINE: ${c.relatedBelowStrong}`,
    `  a question with other sections  (${c.unrelated.count}): median ${f(c.unrelated.median)}  p95 ${f(c.unrelated.p95)}  max ${f(c.unrelated.max)}; at or above STRONG_COSINE: ${c.unrelatedAtStrong}`,
    `  COSINE_BASELINE ${c.baseline}, STRONG_COSINE ${c.strong}: ${c.fits ? "fit this model" : "do not fit this model"}`,
    ...c.advice.map((a) => `  - ${a}`),
  ];
}
