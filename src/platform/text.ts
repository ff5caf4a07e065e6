/** NUL, which Postgres text cannot hold, and unpaired surrogates, which are not text at all. */
const UNSAFE_TEXT = /[\u0000\p{Cs}]/u;

/** Whether the database could not keep this string as it is (a NUL fails, a lone surrogate becomes U+FFFD). */
export function hasUnsafeText(text: string): boolean {
  return UNSAFE_TEXT.test(text);
}
