import { createServer, connect, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { TEST_REDIS_URL } from "./services";

export interface RedisProxy {
  url: string;
  /** What the clients sent, chunk by chunk, and when. */
  chunks: { at: number; text: string }[];
  /** When each of Redis's replies was passed on. */
  replies: { at: number }[];
  /** Holds Redis's replies back (a paused Redis behind an open connection) until resume(). */
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

/**
 * A TCP proxy in front of the test Redis that records what the client sends and can hold
 * Redis's replies back: each for `replyDelayMs`, or all of them while paused, so tests can see
 * when the store's commands leave the process and how it behaves when answers stop coming.
 */
export async function startRedisProxy(options: { replyDelayMs?: number } = {}): Promise<RedisProxy> {
  const target = new URL(TEST_REDIS_URL);
  const chunks: RedisProxy["chunks"] = [];
  const replies: RedisProxy["replies"] = [];
  const sockets = new Set<Socket>();
  const clients: { client: Socket; held: Buffer[] }[] = [];
  let paused = false;
  const pass = (client: Socket, data: Buffer) => {
    replies.push({ at: performance.now() });
    if (!client.destroyed) client.write(data);
  };
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    const entry = { client, held: [] as Buffer[] };
    clients.push(entry);
    sockets.add(client).add(upstream);
    client.on("data", (data) => {
      chunks.push({ at: performance.now(), text: data.toString("latin1") });
      upstream.write(data);
    });
    upstream.on("data", (data) => {
      if (paused) entry.held.push(data);
      else if (options.replyDelayMs) setTimeout(() => pass(client, data), options.replyDelayMs);
      else pass(client, data);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    chunks,
    replies,
    pause: () => void (paused = true),
    resume() {
      paused = false;
      for (const entry of clients) for (const data of entry.held.splice(0)) pass(entry.client, data);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
