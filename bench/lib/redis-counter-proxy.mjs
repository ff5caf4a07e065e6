import { createServer, connect } from "node:net";
import { parentPort, workerData } from "node:worker_threads";

/**
 * The proxy itself, run in a worker thread by ./redis-counter.ts (plain JavaScript: worker threads
 * do not inherit the TypeScript loader): forwards bytes both ways and
 * counts the commands clients send (RESP arrays) into a shared counter.
 */
const { host, port, counter } = workerData;
const commands = new Int32Array(counter);

// Without noDelay, Nagle's algorithm holds small writes until the last one is acknowledged, and
// with delayed ACKs each Redis round trip through the proxy could stall for ~40 ms.
const server = createServer({ noDelay: true }, (client) => {
  const upstream = connect({ port, host, noDelay: true });
  let buffer = Buffer.alloc(0);
  let pendingBulks = 0;
  client.on("data", (chunk) => {
    upstream.write(chunk);
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    // Walk complete RESP frames: "*N" starts a command of N bulk strings "$len\r\n<bytes>\r\n".
    for (;;) {
      const eol = buffer.indexOf("\r\n");
      if (eol < 0) break;
      const head = buffer.subarray(0, eol).toString();
      if (pendingBulks === 0 && head.startsWith("*")) {
        Atomics.add(commands, 0, 1);
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

server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  parentPort?.postMessage({ port: typeof address === "object" && address ? address.port : 0 });
});
parentPort?.on("message", (message) => {
  if (message === "close") server.close(() => parentPort?.postMessage("closed"));
});
