/**
 * An inverted-file (IVF) index over unit vectors: spherical k-means groups the rows into about
 * √N lists, and a question scans only the lists whose centroids it is closest to. Approximate:
 * a near row whose list was not probed is missed, so callers score the rows they must not miss
 * (the BM25 candidates) exactly anyway.
 */

/** Below this many rows a full scan is cheap and exact; the index is not built. */
export const IVF_MIN_ROWS = 512;
/** Lloyd iterations: a few already settle the lists well enough to route questions. */
const ITERATIONS = 6;
/**
 * Lists probed per question. With √N lists this scans roughly nprobe/√N of the rows: 12 of the
 * 52 lists of a 2 MB KB (a quarter of the rows) keeps recall@10 against the full scan at ≥ 0.95
 * even when topics are small (about 9 sections each); with broad topics 2 lists would do.
 */
export const DEFAULT_NPROBE = 12;

export interface Ivf {
  readonly lists: number;
  /** Unit centroids, one row of `dim` per list. */
  readonly centroids: Float32Array;
  /** Rows of list l are members[offsets[l] .. offsets[l + 1]), ascending. */
  readonly offsets: Int32Array;
  readonly members: Int32Array;
}

/** Dot product of row `row` of `data` with `query`; four running sums let the engine overlap the multiplications. */
export function dotRow(data: Float32Array, row: number, query: Float32Array, dim: number): number {
  const base = row * dim;
  const tail = dim - (dim % 4);
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  let i = 0;
  for (; i < tail; i += 4) {
    a += data[base + i]! * query[i]!;
    b += data[base + i + 1]! * query[i + 1]!;
    c += data[base + i + 2]! * query[i + 2]!;
    d += data[base + i + 3]! * query[i + 3]!;
  }
  for (; i < dim; i++) a += data[base + i]! * query[i]!;
  return a + b + c + d;
}

function nearestCentroid(centroids: Float32Array, lists: number, data: Float32Array, row: number, dim: number): number {
  const v = data.subarray(row * dim, (row + 1) * dim);
  let best = 0;
  let bestScore = -Infinity;
  for (let l = 0; l < lists; l++) {
    const s = dotRow(centroids, l, v, dim);
    if (s > bestScore) (bestScore = s), (best = l);
  }
  return best;
}

/**
 * Spherical k-means with `lists` ≈ √count. Seeded with evenly spaced rows in section order, so the
 * same vectors always give the same index (no randomness to make results differ between runs).
 */
export function buildIvf(data: Float32Array, count: number, dim: number, lists?: number): Ivf {
  const steps = ivfSteps(data, count, dim, lists);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Rows assigned between two pauses of the chunked build: a few milliseconds of work. */
const CHUNK_ROWS = 64;

/**
 * The same index built in chunks that yield to the event loop: about 2 s of CPU for a 2 MB KB,
 * and the instance keeps serving questions (by BM25) meanwhile.
 */
export async function buildIvfInChunks(data: Float32Array, count: number, dim: number, lists?: number): Promise<Ivf> {
  const steps = ivfSteps(data, count, dim, lists);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
}

function* ivfSteps(data: Float32Array, count: number, dim: number, lists = Math.max(1, Math.round(Math.sqrt(count)))): Generator<void, Ivf> {
  lists = Math.min(lists, count);
  const centroids = new Float32Array(lists * dim);
  for (let l = 0; l < lists; l++) centroids.set(data.subarray(Math.floor((l * count) / lists) * dim, (Math.floor((l * count) / lists) + 1) * dim), l * dim);
  const assignment = new Int32Array(count);
  for (let iteration = 0; iteration < ITERATIONS; iteration++) {
    let moved = 0;
    for (let r = 0; r < count; r++) {
      const l = nearestCentroid(centroids, lists, data, r, dim);
      if (iteration === 0 || l !== assignment[r]) moved++;
      assignment[r] = l;
      if (r % CHUNK_ROWS === CHUNK_ROWS - 1) yield;
    }
    if (moved === 0) break;
    const sums = new Float64Array(lists * dim);
    const sizes = new Int32Array(lists);
    for (let r = 0; r < count; r++) {
      const l = assignment[r]!;
      sizes[l]!++;
      for (let i = 0, base = r * dim, to = l * dim; i < dim; i++) sums[to + i]! += data[base + i]!;
    }
    for (let l = 0; l < lists; l++) {
      // An empty list keeps its centroid: it may win rows back on the next pass.
      if (sizes[l] === 0) continue;
      let norm = 0;
      for (let i = 0; i < dim; i++) norm += sums[l * dim + i]! ** 2;
      norm = Math.sqrt(norm) || 1;
      for (let i = 0; i < dim; i++) centroids[l * dim + i] = sums[l * dim + i]! / norm;
    }
  }
  const offsets = new Int32Array(lists + 1);
  for (let r = 0; r < count; r++) offsets[assignment[r]! + 1]!++;
  for (let l = 0; l < lists; l++) offsets[l + 1]! += offsets[l]!;
  const fill = offsets.slice(0, lists);
  const members = new Int32Array(count);
  for (let r = 0; r < count; r++) members[fill[assignment[r]!]!++] = r;
  return { lists, centroids, offsets, members };
}

/** The `nprobe` lists whose centroids are closest to the query, best first. */
export function probeLists(ivf: Ivf, query: Float32Array, dim: number, nprobe: number): number[] {
  const scores = new Float32Array(ivf.lists);
  for (let l = 0; l < ivf.lists; l++) scores[l] = dotRow(ivf.centroids, l, query, dim);
  const order = Array.from({ length: ivf.lists }, (_, l) => l);
  order.sort((a, b) => scores[b]! - scores[a]!);
  return order.slice(0, Math.min(nprobe, ivf.lists));
}
