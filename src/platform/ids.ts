import type { Clock } from "./clock";

export interface Random {
  /** Cryptographically secure random bytes. */
  bytes(length: number): Uint8Array;
}

/** True about once in 85 calls (3 in 256): for upkeep that rides along with ordinary requests. */
export function nowAndThen(random: Random): boolean {
  return (random.bytes(1)[0] ?? 0) < 3;
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

const CROCKFORD_CODES = Array.from(CROCKFORD, (ch) => ch.charCodeAt(0));
const RANDOM_CHARS = 16;
const IDS_PER_DRAW = 64;

export function createIdGenerator(clock: Clock, random: Random): IdGenerator {
  // Ids made in the same millisecond share the encoded time, which is most of the work.
  let encodedAt = Number.NaN;
  let time = "";
  // A request id is made for every request: random bytes are drawn for 64 ids at a time and the
  // 80 random bits are written as one flat string (per-id arrays and 16 concatenations cost
  // more than the rest of the id). Every byte is still used once.
  let bytes: Uint8Array = new Uint8Array(0);
  let offset = 0;
  return {
    next(prefix) {
      const now = Math.floor(clock.now());
      if (now !== encodedAt) {
        encodedAt = now;
        time = encodeTime(now);
      }
      if (offset + RANDOM_CHARS > bytes.length) {
        bytes = random.bytes(RANDOM_CHARS * IDS_PER_DRAW);
        offset = 0;
      }
      const b = bytes;
      const o = offset;
      offset += RANDOM_CHARS;
      const C = CROCKFORD_CODES;
      const rand = String.fromCharCode(
        C[b[o]! & 31]!, C[b[o + 1]! & 31]!, C[b[o + 2]! & 31]!, C[b[o + 3]! & 31]!,
        C[b[o + 4]! & 31]!, C[b[o + 5]! & 31]!, C[b[o + 6]! & 31]!, C[b[o + 7]! & 31]!,
        C[b[o + 8]! & 31]!, C[b[o + 9]! & 31]!, C[b[o + 10]! & 31]!, C[b[o + 11]! & 31]!,
        C[b[o + 12]! & 31]!, C[b[o + 13]! & 31]!, C[b[o + 14]! & 31]!, C[b[o + 15]! & 31]!,
      );
      return `${prefix}_${time}${rand}`;
    },
  };
}

/** Matches ids made by createIdGenerator for a given prefix; used to reject malformed path ids early. */
export function idPattern(prefix: string): RegExp {
  return new RegExp(`^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`);
}
