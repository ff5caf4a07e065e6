/**
 * A load that an instance's concurrent requests share (a discovery document, a knowledge-base
 * snapshot): the first caller starts it and the others join it instead of each loading again.
 *
 * On Workers a promise belongs to the request that created it: when that request is cancelled
 * (its client went away), its fetches, queries and timers stop for good and the promise never
 * settles, so every request that joined it would hang until the isolate is recycled. A caller
 * therefore waits at most `joinMs` for a load another request started; past that it drops the
 * load from the slot and starts its own, which later callers join. A failed load leaves the
 * slot, so the next caller tries again.
 */
export interface LoadSlot<T> {
  current?: Promise<T>;
}

const settled = new WeakSet<Promise<unknown>>();
const GAVE_UP = Symbol("gave up");

export async function sharedLoad<T>(slot: LoadSlot<T>, start: () => Promise<T>, options: { joinMs: number; keep: boolean }): Promise<T> {
  // Twice at most: a second abandoned load in a row means this request's own start is the one to wait on.
  for (let attempt = 0; attempt < 2; attempt++) {
    const joined = slot.current;
    if (!joined) return begin(slot, start, options.keep);
    // A settled load answers at once, without arming a timer.
    if (settled.has(joined)) return joined;
    const outcome = await within(joined, options.joinMs);
    if (outcome !== GAVE_UP) return outcome;
    if (slot.current === joined) slot.current = undefined;
  }
  return begin(slot, start, options.keep);
}

function begin<T>(slot: LoadSlot<T>, start: () => Promise<T>, keep: boolean): Promise<T> {
  const load = start();
  slot.current = load;
  load.then(
    () => {
      settled.add(load);
      if (!keep && slot.current === load) slot.current = undefined;
    },
    () => {
      if (slot.current === load) slot.current = undefined;
    },
  );
  return load;
}

async function within<T>(load: Promise<T>, ms: number): Promise<T | typeof GAVE_UP> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([load, new Promise<typeof GAVE_UP>((resolve) => (timer = setTimeout(() => resolve(GAVE_UP), ms)))]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
