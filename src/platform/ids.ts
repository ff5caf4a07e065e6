import type { Clock } from "./clock";

export interface Random {
  /** Cryptographically secure random bytes. */
  bytes(length: number): Uint8Array;
}

const POOL_SIZE = 4096;

/**
 * Web Crypto's CSPRNG, drawn in blocks: one getRandomValues call per id costs more than the
 * rest of a small request. Every byte is still handed out once.
 */
export function createWebRandom(): Random {
  let pool = new Uint8Array(0);
  let offset = 0;
  return {
    bytes(length) {
      if (length > POOL_SIZE) return crypto.getRandomValues(new Uint8Array(length));
      if (offset + length > pool.length) {
        pool = crypto.getRandomValues(new Uint8Array(POOL_SIZE));
        offset = 0;
      }
      const out = pool.slice(offset, offset + length);
      offset += length;
      return out;
    },
  };
}

export const webRandom: Random = createWebRandom();

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

/** 80 random bits as 16 base32 characters. */
function encodeRandom(random: Random): string {
  const bytes = random.bytes(16);
  let rand = "";
  for (let i = 0; i < 16; i++) rand += CROCKFORD[(bytes[i] ?? 0) & 31];
  return rand;
}

export function createIdGenerator(clock: Clock, random: Random): IdGenerator {
  // Ids made in the same millisecond share the encoded time, which is most of the work.
  let encodedAt = Number.NaN;
  let time = "";
  return {
    next(prefix) {
      const now = Math.floor(clock.now());
      if (now !== encodedAt) {
        encodedAt = now;
        time = encodeTime(now);
      }
      return `${prefix}_${time}${encodeRandom(random)}`;
    },
  };
}

/** Matches ids made by createIdGenerator for a given prefix; used to reject malformed path ids early. */
export function idPattern(prefix: string): RegExp {
  return new RegExp(`^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`);
}
