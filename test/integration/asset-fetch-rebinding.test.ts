import type { LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import { describe, expect, it } from "vitest";
import { createLookupFetch } from "../../src/node/asset-fetch";
import { publicOnlyLookup, type LookupAll } from "../../src/node/public-lookup";
import { fetchPublicUrl, type UrlFetchOptions } from "../../src/services/kb/url-fetch";
import { ApiError } from "../../src/errors";
import { GUIDE_MD, tableResolver, useDocumentServer } from "../support/document-server";
import { useTestDatabase } from "../support/environment";
import { buildNodeDeps } from "../../src/node/deps";
import { parseConfig } from "../../src/config";

const docs = useDocumentServer();
const env = useTestDatabase();

/** Connect-time name resolution from a table, as `dns.lookup(name, {all: true})` answers. */
function tableLookup(table: Record<string, string[]>): LookupAll & { asked: string[] } {
  const asked: string[] = [];
  const lookup: LookupAll = (hostname, callback) => {
    asked.push(hostname);
    const found = table[hostname];
    if (!found) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), []);
    callback(
      null,
      found.map((address): LookupAddress => ({ address, family: address.includes(":") ? 6 : 4 })),
    );
  };
  return Object.assign(lookup, { asked });
}

const options = (fetch: typeof globalThis.fetch, check: Record<string, string[]>): UrlFetchOptions => ({
  fetch,
  resolver: tableResolver(check),
  maxBytes: 64 * 1024,
  timeoutMs: 5_000,
  allowedTypes: ["text/markdown", "text/plain"],
});

describe("the Node entry's fetch for asset URLs checks the address it connects to", () => {
  it("refuses a name that looked public to the check but resolves to loopback when connecting (DNS rebinding)", async () => {
    const connectTime = tableLookup({ "rebind.example": ["127.0.0.1"] });
    const fetch = createLookupFetch(publicOnlyLookup({ resolve: connectTime }));
    const hitsBefore = docs.hits.length;
    const err = await fetchPublicUrl(`http://rebind.example:${docs.port}/guide.md`, options(fetch, { "rebind.example": ["93.184.216.34"] })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: "invalid_input", message: "the URL could not be fetched" });
    expect(connectTime.asked).toEqual(["rebind.example"]);
    // The socket never reached the server.
    expect(docs.hits.length).toBe(hitsBefore);
  });

  it("control: without the check, the same answers let the request through to loopback", async () => {
    const connectTime = tableLookup({ "rebind.example": ["127.0.0.1"] });
    const unchecked: LookupFunction = (hostname, lookupOptions, callback) =>
      connectTime(hostname, (err, found) => (err ? callback(err, "", 0) : lookupOptions.all ? callback(null, found) : callback(null, found[0]!.address, found[0]!.family)));
    const fetch = createLookupFetch(unchecked);
    const doc = await fetchPublicUrl(`http://rebind.example:${docs.port}/guide.md`, options(fetch, { "rebind.example": ["93.184.216.34"] }));
    expect(new TextDecoder().decode(doc.bytes)).toBe(GUIDE_MD);
  });

  it("refuses a name with one private address among public ones, and says why in the cause", async () => {
    const fetch = createLookupFetch(publicOnlyLookup({ resolve: tableLookup({ "mixed.example": ["93.184.216.34", "10.0.0.7"] }) }));
    const err = await fetch(`http://mixed.example:${docs.port}/guide.md`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as TypeError).cause).toMatchObject({ code: "ENOTPUBLIC", message: expect.stringContaining("private or reserved") });
  });

  it("connects to an allowed test host and streams the body, so the size cap holds while reading", async () => {
    const lookup = publicOnlyLookup({ resolve: tableLookup({ "docs.test": ["127.0.0.1"] }), allowedHosts: ["docs.test"] });
    const fetch = createLookupFetch(lookup);
    const allowed = { ...options(fetch, { "docs.test": ["127.0.0.1"] }), allowedHosts: ["docs.test"] };
    const doc = await fetchPublicUrl(`http://docs.test:${docs.port}/guide.md`, allowed);
    expect(new TextDecoder().decode(doc.bytes)).toBe(GUIDE_MD);
    const huge = await fetchPublicUrl(`http://docs.test:${docs.port}/huge`, allowed).catch((e: unknown) => e);
    expect(huge).toMatchObject({ code: "payload_too_large" });
  });

  it("is what the Node entry gives the asset routes, with the system resolver behind it", async () => {
    const deps = await buildNodeDeps(parseConfig({ DATABASE_URL: env.db.url, LOG_LEVEL: "silent" }));
    try {
      expect(deps.assetFetch).toBeTypeOf("function");
      // localhost is refused by the URL check before any request; connecting must refuse it too.
      const err = await (deps.assetFetch as typeof fetch)(`http://localhost:${docs.port}/guide.md`).catch((e: unknown) => e);
      expect((err as TypeError).cause).toMatchObject({ code: "ENOTPUBLIC" });
    } finally {
      await deps.close();
    }
  });

  it("passes a name's failure to resolve through as a failed fetch", async () => {
    const fetch = createLookupFetch(publicOnlyLookup({ resolve: tableLookup({}) }));
    const err = await fetch(`http://nowhere.example:${docs.port}/`).catch((e: unknown) => e);
    expect((err as TypeError).cause).toMatchObject({ code: "ENOTFOUND" });
  });
});
