import { describe, expect, it } from "vitest";
import { isPublicAddress } from "../../src/services/kb/addresses";
import { createMemoryBlobStore } from "../../src/services/kb/blob-store";
import { buildTestApp } from "../support/app";
import { routedFetch, tableResolver, useDocumentServer } from "../support/document-server";
import { useTestEnvironment } from "../support/environment";
import { expectError } from "../support/errors";
import { ENTERPRISE, signIn } from "../support/people";
import { json } from "../support/users";

const env = useTestEnvironment();
const docs = useDocumentServer();

// The test network: docs.test is the explicitly allowed fake server; public.example looks public
// to the resolver (and is routed to the fake server); the others resolve to private addresses.
const RESOLVER = {
  "docs.test": ["127.0.0.1"],
  "public.example": ["93.184.216.34"],
  "loopback.example": ["127.0.0.1"],
  "internal.example": ["10.1.2.3"],
  "mixed.example": ["93.184.216.34", "192.168.1.10"],
  "v6-loopback.example": ["::1"],
  "mapped.example": ["::ffff:127.0.0.1"],
};

function app() {
  const resolver = tableResolver(RESOLVER);
  const t = buildTestApp({
    database: env.db.database,
    issuer: env.issuer,
    tierLookup: ENTERPRISE,
    fetch: routedFetch(["docs.test", "public.example"]),
    deps: { blobs: createMemoryBlobStore(), resolver, assetFetchAllowedHosts: ["docs.test"] },
  });
  return { t, resolver };
}

describe("asset URL fetching refuses anything but public http(s) hosts", () => {
  const refused: [string, (port: number) => string][] = [
    ["127.0.0.1", (p) => `http://127.0.0.1:${p}/guide.md`],
    ["localhost", (p) => `http://localhost:${p}/guide.md`],
    ["localhost with a trailing dot", (p) => `http://localhost.:${p}/guide.md`],
    ["a .localhost name", (p) => `http://app.localhost:${p}/guide.md`],
    ["::1", (p) => `http://[::1]:${p}/guide.md`],
    ["::ffff:127.0.0.1", (p) => `http://[::ffff:127.0.0.1]:${p}/guide.md`],
    ["::ffff:7f00:1 (mapped, hex)", (p) => `http://[::ffff:7f00:1]:${p}/guide.md`],
    ["10.0.0.1", () => "http://10.0.0.1/"],
    ["172.16.0.1", () => "http://172.16.0.1/"],
    ["192.168.0.1", () => "http://192.168.0.1/"],
    ["169.254.169.254 (cloud metadata)", () => "http://169.254.169.254/latest/meta-data/"],
    ["fd00:ec2::254 (cloud metadata, IPv6)", () => "http://[fd00:ec2::254]/"],
    ["fe80::1 (link-local)", () => "http://[fe80::1]/"],
    ["0.0.0.0", (p) => `http://0.0.0.0:${p}/guide.md`],
    ["2130706433 (decimal 127.0.0.1)", (p) => `http://2130706433:${p}/guide.md`],
    ["0x7f.1 (hex and short form)", (p) => `http://0x7f.1:${p}/guide.md`],
    ["0177.0.0.1 (octal)", (p) => `http://0177.0.0.1:${p}/guide.md`],
    ["multicast 224.0.0.1", () => "http://224.0.0.1/"],
    ["a name resolving to loopback", (p) => `http://loopback.example:${p}/guide.md`],
    ["a name resolving to a private address", () => "http://internal.example/"],
    ["a name with one private address among public ones", () => "http://mixed.example/"],
    ["a name resolving to ::1", () => "http://v6-loopback.example/"],
    ["a name resolving to ::ffff:127.0.0.1", () => "http://mapped.example/"],
    ["a name that does not resolve", () => "http://nowhere.example/"],
    ["a public-looking URL redirecting to loopback", (p) => `http://public.example:${p}/to-loopback`],
    ["a public-looking URL redirecting to cloud metadata", (p) => `http://public.example:${p}/to-metadata`],
    ["a public-looking URL redirecting to a name resolving privately", (p) => `http://public.example:${p}/to-private-name`],
    ["a redirect to file:", (p) => `http://public.example:${p}/to-file`],
    ["a redirect to a location that does not parse", (p) => `http://public.example:${p}/to-unparsable`],
    ["a redirect to a port out of range", (p) => `http://public.example:${p}/to-bad-port`],
    ["file:", () => "file:///etc/passwd"],
    ["gopher:", () => "gopher://127.0.0.1:6379/_INFO"],
    ["ftp:", () => "ftp://public.example/file.txt"],
    ["credentials in the URL", (p) => `http://user:pw@public.example:${p}/guide.md`],
    ["not a URL", () => "not a url"],
    ["a content type outside the allow-list", (p) => `http://public.example:${p}/image.png`],
  ];

  for (const [name, url] of refused) {
    it(`refuses ${name}`, async () => {
      const { t } = app();
      const admin = await signIn(t, env.issuer, { admin: true });
      const before = docs.hits.length;
      const target = url(docs.port);
      const body = await expectError(await t.request("/api/v1/kb/assets", json({ url: target }, admin.headers)), 400, "invalid_input");
      expect(body.details?.[0]?.path).toBe("url");
      // Refused before any request reached the private target (only the public hop, if any).
      const fetched = docs.hits.slice(before);
      expect(fetched.every((path) => !path.startsWith("/guide.md"))).toBe(true);
    });
  }

  it("refuses an oversized body, declared or streamed, with 413", async () => {
    const { t } = app();
    const admin = await signIn(t, env.issuer, { admin: true });
    await expectError(await t.request("/api/v1/kb/assets", json({ url: `http://public.example:${docs.port}/huge` }, admin.headers)), 413, "payload_too_large");
    await expectError(await t.request("/api/v1/kb/assets", json({ url: `http://public.example:${docs.port}/huge-declared` }, admin.headers)), 413, "payload_too_large");
  });

  it("fetches a public host and follows its redirects to public hosts", async () => {
    const { t, resolver } = app();
    const admin = await signIn(t, env.issuer, { admin: true });
    const res = await t.request("/api/v1/kb/assets", json({ url: `http://public.example:${docs.port}/moved` }, admin.headers));
    expect(res.status, await res.clone().text()).toBe(201);
    expect(resolver.asked.filter((h) => h === "public.example")).toHaveLength(2);
  });

  it("lets only the explicitly allowed test host through to loopback, not its address", async () => {
    const { t } = app();
    const admin = await signIn(t, env.issuer, { admin: true });
    expect((await t.request("/api/v1/kb/assets", json({ url: `http://docs.test:${docs.port}/guide.md` }, admin.headers))).status).toBe(201);
    await expectError(await t.request("/api/v1/kb/assets", json({ url: `http://docs.test:${docs.port}/to-loopback` }, admin.headers)), 400, "invalid_input");
  });
});

describe("address classification", () => {
  it.each([
    ["93.184.216.34", true],
    ["8.8.8.8", true],
    ["2606:4700:4700::1111", true],
    ["::ffff:93.184.216.34", true],
    ["127.0.0.1", false],
    ["127.255.255.254", false],
    ["10.0.0.1", false],
    ["172.16.0.1", false],
    ["172.31.255.255", false],
    ["172.32.0.1", true],
    ["192.168.0.1", false],
    ["169.254.169.254", false],
    ["100.64.0.1", false],
    ["0.0.0.0", false],
    ["255.255.255.255", false],
    ["::1", false],
    ["::", false],
    ["::ffff:127.0.0.1", false],
    ["::ffff:10.0.0.1", false],
    ["0:0:0:0:0:ffff:7f00:0001", false],
    ["64:ff9b::7f00:1", false],
    ["64:ff9b:1::a00:1", false],
    ["64:ff9b:1:ffff::1", false],
    ["::ffff:0:127.0.0.1", false],
    ["::ffff:0:a00:1", false],
    ["::ffff:0:808:808", true],
    ["2002:7f00:1::", false],
    ["fc00::1", false],
    ["fd12:3456::1", false],
    ["fe80::1%eth0", false],
    ["ff02::1", false],
    ["not-an-address", false],
    ["1.2.3", false],
    ["1::2::3", false],
  ])("%s → public: %s", (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});
