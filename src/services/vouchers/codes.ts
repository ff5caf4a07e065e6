import { sha256Hex } from "../../platform/hash";
import type { Random } from "../../platform/ids";

// Crockford's base32: no I, L, O or U, so a code read aloud or typed from paper survives.
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const GROUPS = 4;
const GROUP_LENGTH = 4;
export const CODE_CHARS = GROUPS * GROUP_LENGTH;

/** 16 characters of 5 bits each from 80 random bits, written XXXX-XXXX-XXXX-XXXX. */
export function newVoucherCode(random: Random): string {
  const bytes = random.bytes(10);
  let bits = 0;
  let value = 0;
  let chars = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      chars += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return chars.match(new RegExp(`.{${GROUP_LENGTH}}`, "g"))!.join("-");
}

/**
 * The canonical form of what a member typed: upper case, without separators or spaces, and the
 * letters Crockford reads as digits (O → 0, I and L → 1). Null when it cannot be a code.
 */
export function canonicalCode(input: string): string | null {
  const code = input
    .toUpperCase()
    .replace(/[\s-]/g, "")
    .replace(/O/g, "0")
    .replace(/[IL]/g, "1");
  if (code.length !== CODE_CHARS) return null;
  for (const ch of code) if (!ALPHABET.includes(ch)) return null;
  return code;
}

/** What is stored and looked up: the SHA-256 of the canonical code, never the code. */
export const codeHash = (canonical: string) => sha256Hex(`voucher:${canonical}`);
