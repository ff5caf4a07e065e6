import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { systemResolver } from "../../src/node/dns-resolver";
import { assertPublicUrl, createDohResolver } from "../../src/services/kb/url-fetch";

/** A loopback DNS-over-HTTPS server speaking the JSON form (application/dns-json). */
async function startDohServer(records: Record<string, { A?: string[]; AAAA?: string[] }>) {
  const asked: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const name = url.searchParams.get("name") ?? "";
    const type = url.searchParams.get("type") as "A" | "AAAA";
    asked.push(`${req.headers.accept} ${name} ${type}`);
    const data = records[name]?.[type] ?? [];
    res.writeHead(200, { "content-type": "application/dns-json" });
    res.end(JSON.stringify({ Status: data.length ? 0 : 3, Answer: data.map((address) => ({ name, type: type === "A" ? 1 : 28, TTL: 60, data: address })) }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/dns-query`, asked, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe("name resolution ports", () => {
  it("DNS over HTTPS (the Workers resolver) asks for A and AAAA and returns both", async () => {
    const doh = await startDohServer({ "docs.example": { A: ["93.184.216.34"], AAAA: ["2606:2800:220:1::1"] }, "sneaky.example": { A: ["93.184.216.34"], AAAA: ["::1"] } });
    try {
      const resolver = createDohResolver(globalThis.fetch.bind(globalThis), doh.url);
      expect(await resolver.resolve("docs.example")).toEqual(["93.184.216.34", "2606:2800:220:1::1"]);
      expect(doh.asked).toContain("application/dns-json docs.example A");
      expect(doh.asked).toContain("application/dns-json docs.example AAAA");
      await expect(assertPublicUrl("https://docs.example/help", { resolver })).resolves.toBeInstanceOf(URL);
      // A public A record does not hide a loopback AAAA record.
      await expect(assertPublicUrl("https://sneaky.example/help", { resolver })).rejects.toMatchObject({ code: "invalid_input" });
    } finally {
      await doh.close();
    }
  });

  it("the Node resolver resolves through the system resolver, and localhost is loopback", async () => {
    const addresses = await systemResolver.resolve("localhost");
    expect(addresses.some((a) => a === "127.0.0.1" || a === "::1")).toBe(true);
  });
});
