/**
 * If-None-Match as RFC 9110 (13.1.2) reads it: "*" matches any current representation, otherwise
 * a list of entity tags compared weakly (a W/ prefix on either side does not matter).
 */
export function noneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const value = header.trim();
  if (value === "*") return true;
  const wanted = opaque(etag);
  return value.split(",").some((tag) => opaque(tag.trim()) === wanted);
}

const opaque = (tag: string) => (tag.startsWith("W/") ? tag.slice(2) : tag);

/** The quality Accept gives `type`, from its most specific matching range, and how specific that was. */
function acceptance(accept: string, type: string): { quality: number; specificity: number } {
  const major = type.split("/")[0];
  let specificity = 0;
  let quality = 0;
  for (const range of accept.split(",")) {
    const [media = "", ...params] = range.split(";").map((p) => p.trim().toLowerCase());
    const s = media === type ? 3 : media === `${major}/*` ? 2 : media === "*/*" ? 1 : 0;
    if (s <= specificity) continue;
    specificity = s;
    const q = params.find((p) => p.startsWith("q="));
    const value = q === undefined ? 1 : Number(q.slice(2));
    quality = Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
  }
  return { quality, specificity };
}

/**
 * Whether Accept asks for `type` rather than the route's default `fallback`: `type` is named
 * outright with a q above 0 and at least the fallback's. A wildcard alone keeps the default.
 */
export function prefers(accept: string | undefined, type: string, fallback: string): boolean {
  if (!accept) return false;
  const mine = acceptance(accept, type);
  return mine.specificity === 3 && mine.quality > 0 && mine.quality >= acceptance(accept, fallback).quality;
}
