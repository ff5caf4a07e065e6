import http from "node:http";

export interface HttpAnswer {
  status: number;
  text: string;
}

/**
 * A lean keep-alive GET client for closed-loop benches: node:http with one socket per
 * concurrent client. fetch() costs the load generator several times more CPU per request, and
 * on a two-core machine that CPU is taken from the server being measured.
 */
export function keepAliveGet(connections: number): (url: string, headers?: Record<string, string>) => Promise<HttpAnswer> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  return (url, headers) =>
    new Promise((resolve, reject) => {
      const req = http.get(url, { agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      });
      req.on("error", reject);
    });
}
