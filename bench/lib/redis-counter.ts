import { createServer, connect, type Server } from "node:net";

/**
 * A loopback TCP proxy in front of Redis that counts the commands clients send (RESP arrays),
 * so a benchmark sees round trips from the client's side: commands a Lua script runs inside
 * Redis are not counted, unlike in INFO commandstats.
 */
export async function startRedisCounter(target: { host: string; port: number }): Promise<{ url: string; commands(): number; close(): Promise<void> }> {
  let commands = 0;
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    let buffer = Buffer.alloc(0);
    let pendingBulks = 0;
    client.on("data", (chunk: Buffer) => {
      upstream.write(chunk);
      buffer = Buffer.concat([buffer, chunk]);
      // Walk complete RESP frames: "*N" starts a command of N bulk strings "$len\r\n<bytes>\r\n".
      for (;;) {
        const eol = buffer.indexOf("\r\n");
        if (eol < 0) break;
        const head = buffer.subarray(0, eol).toString();
        if (pendingBulks === 0 && head.startsWith("*")) {
          commands += 1;
          pendingBulks = Number(head.slice(1));
          buffer = buffer.subarray(eol + 2);
        } else if (head.startsWith("$")) {
          const len = Number(head.slice(1));
          if (buffer.length < eol + 2 + len + 2) break;
          buffer = buffer.subarray(eol + 2 + len + 2);
          pendingBulks -= 1;
        } else {
          buffer = buffer.subarray(eol + 2);
        }
      }
    });
    upstream.on("data", (chunk) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `redis://127.0.0.1:${port}`,
    commands: () => commands,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
