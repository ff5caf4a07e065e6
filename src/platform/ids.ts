import type { Clock } from "./clock";

export interface Random {
  /** Cryptographically secure random bytes. */
  bytes(length: number): Uint8Array;
}

/** True about once in 85 calls (3 in 256): for upkeep that rides along with ordinary requests. */
export function nowAndThen(random: Random): boolean {
  return (random.bytes(1)[0] ?? 0) < 3;
}

/** Web Crypto's CSPRNG, one call per draw: nothing random is held in memory between draws. */
export const webRandom: Random = { bytes: (length) => crypto.getRandomValues(new Uint8Array(length)) };

export interface IdGenerator {
  /**
   * A new id: `<prefix>_<26 chars>`. The body is a ULID (48-bit time + 80 random bits in
   * Crockford base32), so ids sort by creation time and never collide in practice.
   */
  next(prefix: string): string;
}

// Crockford's base32 in lower case, as ids are written.
const CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz";

/** 48-bit milliseconds as 10 base32 characters. */
function encodeTime(nowMs: number): string {
  let time = "";
  let t = Math.floor(nowMs);
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  return time;
}

const RANDOM_CHARS = 16;

export function createIdGenerator(clock: Clock, random: Random): IdGenerator {
  return {
    next(prefix) {
      const bytes = random.bytes(RANDOM_CHARS);
      let rand = "";
      for (const b of bytes) rand += CROCKFORD[b & 31];
      return `${prefix}_${encodeTime(clock.now())}${rand}`;
    },
  };
}

/** Matches ids made by createIdGenerator for a given prefix; used to reject malformed path ids early. */
export function idPattern(prefix: string): RegExp {
  return new RegExp(`^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`);
}
