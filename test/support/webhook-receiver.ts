import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export type ReceiverMode = "ok" | "500" | "410" | "429" | "slow" | "redirect";

export interface ReceivedDelivery {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  path: string;
  /** For each secret the receiver holds (in order): whether the `standardwebhooks` library verified the delivery with it. */
  verified: boolean[];
}

export interface WebhookReceiver {
  port: number;
  url(path?: string): string;
  mode: ReceiverMode;
  /** The secrets a partner would configure the library with. */
  secrets: string[];
  received: ReceivedDelivery[];
  /** Resolves once `count` deliveries have arrived, or rejects at the deadline. */
  waitFor(count: number, deadlineMs?: number): Promise<ReceivedDelivery[]>;
  close(): Promise<void>;
}

/**
 * A partner's endpoint on loopback: every delivery is checked with the `standardwebhooks` package,
 * as a partner would check it, and answered by the current mode. A path under `/flaky/` answers
 * 500 to the first arrival of each webhook-id and 200 after. `GET /__received` lists what arrived
 * (for tests in workerd, which cannot read this process's memory; they verify the signatures there).
 */
export async function startWebhookReceiver(options: { slowMs?: number; retryAfterSeconds?: number; host?: string } = {}): Promise<WebhookReceiver> {
  const waiters: { count: number; resolve: () => void }[] = [];
  const receiver: WebhookReceiver = {
    port: 0,
    mode: "ok",
    secrets: [],
    received: [],
    url: (path = "/hooks") => `http://${options.host ?? "127.0.0.1"}:${receiver.port}${path}`,
    waitFor: (count, deadlineMs = 10_000) =>
      new Promise((resolve, reject) => {
        if (receiver.received.length >= count) return resolve(receiver.received);
        const timer = setTimeout(() => reject(new Error(`only ${receiver.received.length} of ${count} deliveries arrived`)), deadlineMs);
        waiters.push({ count, resolve: () => (clearTimeout(timer), resolve(receiver.received)) });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/__received") {
      return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(receiver.received));
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const headers = { "webhook-id": String(req.headers["webhook-id"] ?? ""), "webhook-timestamp": String(req.headers["webhook-timestamp"] ?? ""), "webhook-signature": String(req.headers["webhook-signature"] ?? "") };
      const verified = receiver.secrets.map((secret) => {
        try {
          new Webhook(secret).verify(body, headers);
          return true;
        } catch {
          return false;
        }
      });
      receiver.received.push({ id: headers["webhook-id"], timestamp: headers["webhook-timestamp"], signature: headers["webhook-signature"], body, path: req.url ?? "", verified });
      for (const w of [...waiters]) if (receiver.received.length >= w.count) (waiters.splice(waiters.indexOf(w), 1), w.resolve());
      if (req.url?.startsWith("/flaky/") && receiver.received.filter((r) => r.id === headers["webhook-id"]).length === 1) return res.writeHead(500).end("first try fails");
      switch (receiver.mode) {
        case "ok":
          // Holding no secret, it leaves the check to its reader (`GET /__received`).
          return res.writeHead(verified.length === 0 || verified.some(Boolean) ? 200 : 401).end();
        case "500":
          return res.writeHead(500).end("boom");
        case "410":
          return res.writeHead(410).end();
        case "429":
          return res.writeHead(429, { "retry-after": String(options.retryAfterSeconds ?? 3600) }).end();
        case "redirect":
          return res.writeHead(302, { location: "/elsewhere" }).end();
        case "slow":
          return void setTimeout(() => res.writeHead(200).end(), options.slowMs ?? 2_000).unref();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.port = (server.address() as AddressInfo).port;
  return receiver;
}
