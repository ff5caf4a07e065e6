import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeHttpFetch } from "../../src/node/http-fetch";

/** A loopback server whose routes each show one behaviour the inference hosts rely on. */
let server: Server;
let base: string;
const seen: { method: string; headers: IncomingMessage["headers"]; body: string }[] = [];

function route(req: IncomingMessage, res: ServerResponse, body: string): void {
  seen.push({ method: req.method ?? "", headers: req.headers, body });
  const path = new URL(req.url ?? "/", "http://x").pathname;
  if (path === "/echo") {
    res.writeHead(201, { "content-type": "application/json", "x-multi": ["a", "b"] });
    res.end(JSON.stringify({ got: JSON.parse(body || "null"), method: req.method }));
  } else if (path === "/empty") {
    res.writeHead(204).end();
  } else if (path === "/fail") {
    res.writeHead(503, { "content-type": "text/plain" }).end("model is loading");
  } else if (path === "/moved") {
    res.writeHead(302, { location: "/echo" }).end();
  } else if (path === "/stream") {
    // Two lines now, the last only when the client has shown it read the first.
    res.writeHead(200, { "content-type": "application/x-ndjson" });
    res.write('{"n":1}\n');
    streamWaiting = () => res.end('{"n":2}\n');
  } else if (path === "/hang") {
    res.writeHead(200, { "content-type": "application/json" });
    res.write("{");
  } else {
    res.writeHead(404).end();
  }
}
let streamWaiting: (() => void) | undefined;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => route(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("the Node entry's fetch for inference hosts", () => {
  const nodeFetch = createNodeHttpFetch();

  it("sends method, headers and a JSON body, and answers status, headers and body", async () => {
    const res = await nodeFetch(`${base}/echo`, { method: "POST", headers: { "Content-Type": "application/json", Authorization: "Bearer k" }, body: JSON.stringify({ q: "hé" }) });
    expect(res.status).toBe(201);
    expect(res.ok).toBe(true);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("x-multi")).toBe("a, b");
    expect(await res.json()).toEqual({ got: { q: "hé" }, method: "POST" });
    expect(res.bodyUsed).toBe(true);
    await expect(res.text()).rejects.toBeInstanceOf(TypeError);
    expect(seen.at(-1)?.headers.authorization).toBe("Bearer k");
  });

  it("takes headers as a Headers object or pairs, and bytes as a body", async () => {
    await nodeFetch(`${base}/echo`, { method: "POST", headers: new Headers({ "x-one": "1" }), body: new TextEncoder().encode('"bytes"') });
    expect(seen.at(-1)).toMatchObject({ headers: { "x-one": "1" }, body: '"bytes"' });
    await nodeFetch(new URL(`${base}/echo`), { method: "POST", headers: [["x-two", "2"]], body: "1" });
    expect(seen.at(-1)?.headers["x-two"]).toBe("2");
  });

  it("answers a failure status with its text, an empty answer with no body, and a redirect as it is", async () => {
    const failed = await nodeFetch(`${base}/fail`);
    expect([failed.status, failed.ok, await failed.text()]).toEqual([503, false, "model is loading"]);
    const empty = await nodeFetch(`${base}/empty`);
    expect([empty.status, empty.body]).toEqual([204, null]);
    const moved = await nodeFetch(`${base}/moved`);
    expect([moved.status, moved.headers.get("location")]).toEqual([302, "/echo"]);
  });

  it("hands a streamed answer over as it arrives", async () => {
    const res = await nodeFetch(`${base}/stream`, { method: "POST", body: "{}" });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    const first = await reader.read();
    expect(decoder.decode(first.value)).toBe('{"n":1}\n');
    streamWaiting?.();
    let rest = "";
    for (let part = await reader.read(); !part.done; part = await reader.read()) rest += decoder.decode(part.value);
    expect(rest).toBe('{"n":2}\n');
  });

  it("rejects with the signal's reason when aborted before or during the answer", async () => {
    const early = new AbortController();
    early.abort(new Error("gone already"));
    await expect(nodeFetch(`${base}/echo`, { signal: early.signal })).rejects.toThrow("gone already");

    const late = new AbortController();
    const pending = nodeFetch(`${base}/hang`, { signal: late.signal });
    setTimeout(() => late.abort(new Error("timed out")), 50);
    await expect(pending).rejects.toThrow("timed out");
  });

  it("fails with a TypeError when the host cannot be reached", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const err = await nodeFetch(`http://127.0.0.1:${port}/`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as TypeError).cause).toMatchObject({ code: "ECONNREFUSED" });
  });

  it("refuses other protocols and leaves other body kinds to the global fetch", async () => {
    await expect(nodeFetch("ftp://127.0.0.1/")).rejects.toThrow(/unsupported protocol/);
    const res = await nodeFetch(`${base}/echo`, { method: "POST", body: new Blob(['"blob"']) });
    expect(await res.json()).toEqual({ got: "blob", method: "POST" });
  });
});
