import { createHmac } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
  raw: string;
  body: unknown;
}

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * `ok` speaks the protocol; `error` answers the provider's 5xx; `timeout` never answers; `late`
 * acts on the request as `ok` would but its answer never arrives (the ambiguous failure).
 */
export type FakeMode = "ok" | "error" | "timeout" | "late";

export interface FakeServer {
  url: string;
  requests: Recorded[];
  mode: FakeMode;
  close(): Promise<void>;
}

/**
 * The loopback server under every provider fake: records each request, then answers through the
 * fake's protocol handler, or with the mode's failure.
 */
export async function startFakeServer(handle: (req: Recorded) => Reply | Promise<Reply>, errorReply: Reply): Promise<FakeServer> {
  const held = new Set<ServerResponse>();
  const fake: FakeServer = { url: "", requests: [], mode: "ok", close: async () => undefined };
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const raw = Buffer.concat(chunks).toString("utf8");
      const url = new URL(req.url ?? "/", "http://fake");
      let body: unknown = raw;
      try {
        body = raw === "" ? null : JSON.parse(raw);
      } catch {
        // kept as text
      }
      const recorded: Recorded = { method: req.method ?? "GET", path: url.pathname, query: url.searchParams, headers: req.headers, raw, body };
      fake.requests.push(recorded);
      if (fake.mode === "timeout") {
        held.add(res);
        return;
      }
      const reply = fake.mode === "error" ? errorReply : await handle(recorded);
      if (fake.mode === "late") {
        held.add(res);
        return;
      }
      res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
      res.end(JSON.stringify(reply.body));
    })().catch((err: unknown) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: String(err) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}

export const hmacHex = (algorithm: "sha256" | "sha512", secret: string, message: string) => createHmac(algorithm, secret).update(message).digest("hex");

/** A webhook as the provider would send it: the exact body bytes and the headers. */
export interface Delivery {
  path: string;
  body: string;
  headers: Record<string, string>;
}

export function deliveryInit(d: Delivery, headers: Record<string, string> = d.headers): RequestInit {
  return { method: "POST", headers: { "content-type": "application/json", ...headers }, body: d.body };
}
