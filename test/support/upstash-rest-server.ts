import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
// The default export: the workerd project's global setup loads this file through a resolver that
// does not see ioredis's named exports.
import Redis from "ioredis";

/**
 * A loopback stand-in for Upstash's REST API in front of a real Redis, so the Upstash adapter
 * is tested against real Redis semantics. Speaks: POST / (one command), /pipeline and
 * /multi-exec (lists of commands), Bearer auth, and `Upstash-Encoding: base64`.
 */
export async function startUpstashRestServer(options: {
  redisUrl: string;
  token: string;
}): Promise<{ url: string; close(): Promise<void> }> {
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1 });

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => send(res, 500, { error: String(error) }));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.headers.authorization !== `Bearer ${options.token}`) return send(res, 401, { error: "Unauthorized" });
    if (req.method !== "POST") return send(res, 405, { error: "Method not allowed" });
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return send(res, 400, { error: "ERR failed to parse JSON request body" });
    }
    const base64 = String(req.headers["upstash-encoding"]).toLowerCase() === "base64";
    const encode = (reply: unknown) => encodeReply(reply, base64);
    const path = new URL(req.url ?? "/", "http://x").pathname;

    if (path === "/") {
      if (!isCommand(body)) return send(res, 400, { error: "ERR the request body must be a command array" });
      try {
        return send(res, 200, { result: encode(await redis.callBuffer(...toArgs(body))) });
      } catch (error) {
        return send(res, 400, { error: errorMessage(error) });
      }
    }
    if (path !== "/pipeline" && path !== "/multi-exec") return send(res, 404, { error: "Not found" });
    if (!Array.isArray(body) || body.length === 0 || !body.every(isCommand)) {
      return send(res, 400, { error: "ERR the request body must be an array of command arrays" });
    }
    // One connection runs commands in order; MULTI additionally keeps other clients out.
    const batch = path === "/multi-exec" ? redis.multi() : redis.pipeline();
    for (const command of body) batch.callBuffer(...toArgs(command));
    let replies: [Error | null, unknown][] | null;
    try {
      replies = await batch.exec();
    } catch (error) {
      return send(res, 400, { error: errorMessage(error) });
    }
    if (!replies) return send(res, 400, { error: "EXECABORT Transaction discarded" });
    send(res, 200, replies.map(([error, reply]) => (error ? { error: errorMessage(error) } : { result: encode(reply) })));
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
      await redis.quit();
    },
  };
}

type Command = [string, ...unknown[]];

function isCommand(value: unknown): value is Command {
  return Array.isArray(value) && typeof value[0] === "string";
}

function toArgs([name, ...args]: Command): [string, ...(string | number)[]] {
  return [name, ...args.map((arg) => (typeof arg === "number" ? arg : typeof arg === "string" ? arg : JSON.stringify(arg)))];
}

// Bulk strings arrive as Buffers (callBuffer), so bytes that are not UTF-8 survive base64.
// ioredis turns HGETALL into an object; Upstash sends the flat array Redis sent.
function encodeReply(reply: unknown, base64: boolean): unknown {
  if (Buffer.isBuffer(reply)) return base64 ? reply.toString("base64") : reply.toString("utf8");
  if (typeof reply === "string") return base64 ? Buffer.from(reply).toString("base64") : reply;
  if (Array.isArray(reply)) return reply.map((item) => encodeReply(item, base64));
  if (reply !== null && typeof reply === "object") return encodeReply(Object.entries(reply).flat(), base64);
  return reply;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
