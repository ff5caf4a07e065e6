import type { LookupFunction } from "node:net";
import { Agent, fetch as undiciFetch } from "undici";

/**
 * The runtime's standard fetch (undici) with every connection resolved through `lookup`: for asset
 * URLs, the public-only resolver (public-lookup.ts), so that the address a socket connects to is
 * the one checked. Redirects are the caller's to check and follow (it sends `redirect: "manual"`).
 */
export function createLookupFetch(lookup: LookupFunction): typeof fetch {
  const dispatcher = new Agent({ connect: { lookup } });
  return ((input: string | URL, init: RequestInit = {}) =>
    undiciFetch(input, { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher })) as unknown as typeof fetch;
}
