import { ApiError } from "../../errors";
import { ipVersion, isPublicAddress } from "./addresses";

/** Resolves a host name to its addresses (A and AAAA). Behind a port: each runtime resolves its own way. */
export interface HostResolver {
  resolve(hostname: string): Promise<string[]>;
}

/**
 * DNS over HTTPS (RFC 8484 JSON form) through the given fetch: what Workers have, since they
 * cannot resolve names themselves. The Node server uses the system resolver instead.
 */
export function createDohResolver(fetchImpl: typeof fetch, endpoint = "https://cloudflare-dns.com/dns-query"): HostResolver {
  const query = async (name: string, type: "A" | "AAAA"): Promise<string[]> => {
    const res = await fetchImpl(`${endpoint}?name=${encodeURIComponent(name)}&type=${type}`, {
      headers: { accept: "application/dns-json" },
      signal: AbortSignal.timeout(3_000),
    });
    if (!res.ok) throw new Error(`DNS over HTTPS answered ${res.status}`);
    const body = (await res.json()) as { Status?: number; Answer?: { type: number; data: string }[] };
    const wanted = type === "A" ? 1 : 28;
    return (body.Answer ?? []).filter((a) => a.type === wanted).map((a) => a.data);
  };
  return {
    async resolve(hostname) {
      const [a, aaaa] = await Promise.all([query(hostname, "A"), query(hostname, "AAAA")]);
      return [...a, ...aaaa];
    },
  };
}

export interface UrlFetchOptions {
  fetch: typeof fetch;
  resolver: HostResolver;
  maxBytes: number;
  timeoutMs: number;
  allowedTypes: readonly string[];
  maxRedirects?: number;
  /**
   * Host names let through although they resolve to a non-public address. Only tests set this
   * (a loopback fake server under a made-up name); production entries never do.
   */
  allowedHosts?: readonly string[];
}

export interface FetchedDocument {
  url: string;
  bytes: Uint8Array;
  contentType: string;
}

const refuse = (message: string, url: string) => new ApiError("invalid_input", message, { details: [{ path: "url", message: `${message}: ${url.slice(0, 200)}` }] });

/** A host name as allow-lists compare it: lower case, without a trailing root dot. */
export function comparableHostName(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, "");
}

/** Throws unless every address the URL's host stands for is public (or the host is explicitly allowed). */
export async function assertPublicUrl(raw: string, options: Pick<UrlFetchOptions, "resolver" | "allowedHosts">): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse("not a valid URL", raw);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw refuse("only http and https URLs can be fetched", raw);
  if (url.username || url.password) throw refuse("URLs with credentials are not fetched", raw);
  // WHATWG URL parsing has already turned odd IPv4 spellings (0x7f.1, 2130706433, 0177.0.0.1)
  // into dotted form, so a literal is judged by its real value.
  const host = comparableHostName(url.hostname);
  if (options.allowedHosts?.includes(host)) return url;
  if (ipVersion(host) !== undefined) {
    if (!isPublicAddress(host)) throw refuse("the URL points at a private or reserved address", raw);
    return url;
  }
  if (host === "localhost" || host.endsWith(".localhost") || !host.includes(".")) throw refuse("the URL points at a private or reserved address", raw);
  let addresses: string[];
  try {
    addresses = await options.resolver.resolve(host);
  } catch {
    throw refuse("the URL's host could not be resolved", raw);
  }
  if (addresses.length === 0) throw refuse("the URL's host could not be resolved", raw);
  // Every address must be public: a name with one private address among public ones could be
  // connected to the private one.
  if (!addresses.every(isPublicAddress)) throw refuse("the URL points at a private or reserved address", raw);
  return url;
}

/**
 * Fetches an admin-supplied URL without letting it reach the platform's own network: the host
 * is checked before the first request and again before following each redirect (redirects are
 * followed here, never by fetch), and the body is read up to a size cap within a time limit.
 */
export async function fetchPublicUrl(raw: string, options: UrlFetchOptions): Promise<FetchedDocument> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  let current = raw;
  for (let hop = 0; ; hop++) {
    const url = await assertPublicUrl(current, options);
    let res: Response;
    try {
      res = await options.fetch(url.href, { redirect: "manual", signal: deadline, headers: { accept: options.allowedTypes.join(", ") } });
    } catch {
      throw refuse(deadline.aborted ? "the URL did not answer in time" : "the URL could not be fetched", current);
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      const location = res.headers.get("location");
      if (!location) throw refuse("the URL redirected without a location", current);
      if (hop >= (options.maxRedirects ?? 3)) throw refuse("the URL redirected too many times", current);
      // The page's server, not the admin, wrote this location: one that does not parse is its fault.
      try {
        current = new URL(location, url).href;
      } catch {
        throw refuse("the URL redirected to a location that is not a valid URL", current);
      }
      continue;
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw refuse(`the URL answered HTTP ${res.status}`, current);
    }
    const contentType = (res.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (!options.allowedTypes.includes(contentType)) {
      await res.body?.cancel();
      throw refuse(`content type '${contentType || "none"}' is not accepted (${options.allowedTypes.join(", ")})`, current);
    }
    const declared = Number(res.headers.get("content-length") ?? "0");
    if (declared > options.maxBytes) {
      await res.body?.cancel();
      throw new ApiError("payload_too_large", `the document is larger than ${options.maxBytes} bytes`);
    }
    const bytes = await readCapped(res, options.maxBytes, deadline, current);
    return { url: url.href, bytes, contentType };
  }
}

async function readCapped(res: Response, maxBytes: number, deadline: AbortSignal, url: string): Promise<Uint8Array> {
  if (!res.body) return new Uint8Array();
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) throw new ApiError("payload_too_large", `the document is larger than ${maxBytes} bytes`);
      chunks.push(value);
    }
  } catch (err) {
    await reader.cancel().catch(() => undefined);
    if (err instanceof ApiError) throw err;
    throw refuse(deadline.aborted ? "the URL did not answer in time" : "the URL could not be read", url);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}
