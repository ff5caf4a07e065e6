/**
 * Reciprocal ranking for the discovery feed. A card is good when it fits BOTH people: how well
 * they fit my wishes and how well I fit theirs are scored apart and combined with a harmonic
 * mean, so a one-sided fit (they are perfect for me, I am at the edge of everything they want)
 * ranks below a balanced one. Recent activity and newness lift a card a little on top.
 */

export interface ScoringSide {
  age: number;
  ageMin: number;
  ageMax: number;
  maxDistanceKm: number;
  interests: string[];
}

export interface ScoringInput {
  viewer: ScoringSide;
  candidate: ScoringSide;
  /** Null when either side has no position (the same-country fallback matched them). */
  distanceKm: number | null;
  lastActiveMs: number;
  createdMs: number;
  now: number;
  /** The interest overlap when the caller computed it already (see storedInterestOverlap). */
  overlap?: number;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Weights of one side's fit; they add up to 1. */
const FIT = { interests: 0.5, distance: 0.3, age: 0.2 } as const;
/** Weights of the final score; they add up to 1. */
const SCORE = { mutual: 0.7, activity: 0.2, newness: 0.1 } as const;
/** Activity halves roughly every 33 hours; a profile is "new" for about its first week. */
const ACTIVITY_DECAY_MS = 48 * HOUR;
const NEWNESS_DECAY_MS = 7 * DAY;
/** Fit of the distance when it is unknown (same country, no positions): neither near nor far. */
const UNKNOWN_DISTANCE_FIT = 0.5;

const clamp01 = (x: number) => (x < 0 ? 0 : x > 1 ? 1 : x);

/** Jaccard overlap of two interest lists, case-insensitive; symmetric, so it counts both ways. */
export function interestOverlap(a: string[], b: string[]): number {
  if (a.length === 0 || b.length === 0) return 0;
  const left = new Set(a.map((s) => s.toLowerCase()));
  const right = new Set(b.map((s) => s.toLowerCase()));
  let common = 0;
  for (const x of left) if (right.has(x)) common++;
  return common / (left.size + right.size - common);
}

/**
 * The same overlap when both lists are in their stored form (trimmed, lower-cased, unique) and
 * the viewer's is already a set: the feed scores a thousand candidates against one viewer.
 */
export function storedInterestOverlap(viewer: ReadonlySet<string>, candidate: readonly string[]): number {
  if (viewer.size === 0 || candidate.length === 0) return 0;
  let common = 0;
  for (const x of candidate) if (viewer.has(x)) common++;
  return common / (viewer.size + candidate.length - common);
}

/** 1 at zero distance, 0 at the side's maximum. */
export function distanceFit(distanceKm: number | null, maxKm: number): number {
  if (distanceKm === null) return UNKNOWN_DISTANCE_FIT;
  return clamp01(1 - distanceKm / Math.max(1, maxKm));
}

/** 1 at the middle of the wished range, 0.5 at its edges (anyone outside was filtered out). */
export function ageFit(age: number, min: number, max: number): number {
  const mid = (min + max) / 2;
  const half = Math.max(1, (max - min) / 2);
  return clamp01(1 - (0.5 * Math.abs(age - mid)) / half);
}

export interface Score {
  /** 0–1, what the feed sorts by. */
  score: number;
  mutual: number;
  forViewer: number;
  forCandidate: number;
}

export function reciprocalScore(input: ScoringInput): Score {
  const { viewer, candidate } = input;
  const overlap = input.overlap ?? interestOverlap(viewer.interests, candidate.interests);
  // How well the candidate fits what I asked for …
  const forViewer = FIT.interests * overlap + FIT.distance * distanceFit(input.distanceKm, viewer.maxDistanceKm) + FIT.age * ageFit(candidate.age, viewer.ageMin, viewer.ageMax);
  // … and how well I fit what they asked for.
  const forCandidate =
    FIT.interests * overlap + FIT.distance * distanceFit(input.distanceKm, candidate.maxDistanceKm) + FIT.age * ageFit(viewer.age, candidate.ageMin, candidate.ageMax);
  const mutual = forViewer + forCandidate > 0 ? (2 * forViewer * forCandidate) / (forViewer + forCandidate) : 0;
  const activity = Math.exp(-Math.max(0, input.now - input.lastActiveMs) / ACTIVITY_DECAY_MS);
  const newness = Math.exp(-Math.max(0, input.now - input.createdMs) / NEWNESS_DECAY_MS);
  const score = clamp01(SCORE.mutual * mutual + SCORE.activity * activity + SCORE.newness * newness);
  return { score, mutual, forViewer, forCandidate };
}
