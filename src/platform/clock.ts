export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

/** One UTC day in milliseconds: retentions, windows and day cuts count in it. */
export const DAY_MS = 86_400_000;

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests can freeze and move by hand. */
export function fixedClock(start: number): Clock & { set(ms: number): void; advance(ms: number): void } {
  let current = start;
  return {
    now: () => current,
    set: (ms) => {
      current = ms;
    },
    advance: (ms) => {
      current += ms;
    },
  };
}
