/**
 * Where a sign-in may send the member afterwards: a path of the web app itself. Anything that
 * would leave the origin (an absolute URL elsewhere, `//host`, `/\host`, a scheme, control
 * characters) becomes `/`.
 */
export function safeReturnTo(raw: string | undefined, webOrigin: string): string {
  if (!raw || raw.length > 2048 || !raw.startsWith("/") || raw.startsWith("//") || raw.startsWith("/\\")) return "/";
  if (/[\u0000-\u001f\u007f\\]/.test(raw)) return "/";
  let url: URL;
  try {
    url = new URL(raw, webOrigin);
  } catch {
    return "/";
  }
  if (url.origin !== webOrigin) return "/";
  // The auth routes themselves would loop.
  if (url.pathname.startsWith("/api/auth/")) return "/";
  return `${url.pathname}${url.search}${url.hash}`;
}
