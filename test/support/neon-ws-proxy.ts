import { createServer, type IncomingMessage } from "node:http";
import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";

export interface NeonWsProxy {
  port: number;
  close(): Promise<void>;
}

/**
 * What Neon runs in front of its databases, small enough for tests: the serverless driver opens
 * `ws://<proxy>?address=<host>:<port>` and then sends raw Postgres wire bytes in binary messages,
 * with no framing of their own. Only the listed `host:port` targets are reachable, so the proxy
 * cannot be used to reach anything else on the machine.
 */
export async function startNeonWsProxy(options: { allow: string[]; host?: string }): Promise<NeonWsProxy> {
  const allow = new Set(options.allow);
  const server = createServer((_req, res) => {
    res.writeHead(426, { "content-type": "text/plain" }).end("WebSocket upgrade required\n");
  });
  const wss = new WebSocketServer({ noServer: true });
  const tcp = new Set<Socket>();

  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const target = targetOf(req);
    if (target === undefined || !allow.has(target)) {
      // Refusing before the upgrade gives the client a plain HTTP status it can report.
      socket.end(`HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => bridge(ws, target, tcp));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, options.host ?? "127.0.0.1", () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("proxy has no TCP address");

  return {
    port: address.port,
    async close() {
      for (const ws of wss.clients) ws.terminate();
      for (const s of tcp) s.destroy();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function targetOf(req: IncomingMessage): string | undefined {
  try {
    return new URL(req.url ?? "/", "http://proxy").searchParams.get("address") ?? undefined;
  } catch {
    return undefined;
  }
}

function bridge(ws: WebSocket, target: string, tcp: Set<Socket>): void {
  const colon = target.lastIndexOf(":");
  const socket = connect({ host: target.slice(0, colon), port: Number(target.slice(colon + 1)) });
  tcp.add(socket);
  socket.setNoDelay(true);
  // net.Socket queues writes made while it is still connecting, so the startup message the
  // driver sends right after `open` is not lost.
  ws.on("message", (data: Buffer | ArrayBuffer | Buffer[]) => {
    socket.write(Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data));
  });
  socket.on("data", (chunk) => ws.send(chunk, { binary: true }));
  const closeBoth = () => {
    tcp.delete(socket);
    socket.destroy();
    if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close();
  };
  socket.on("close", closeBoth);
  socket.on("error", closeBoth);
  ws.on("close", closeBoth);
  ws.on("error", closeBoth);
}
