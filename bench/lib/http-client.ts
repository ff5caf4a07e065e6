import http from "node:http";

export interface HttpAnswer {
  status: number;
  text: string;
}

export interface HttpCall {
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
}

/**
 * A lean keep-alive client for closed-loop benches: node:http with one socket per concurrent
 * client. fetch() costs the load generator several times more CPU per request, and on a
 * two-core machine that CPU is taken from the server being measured.
 */
export function keepAliveClient(connections: number): (url: string, call?: HttpCall) => Promise<HttpAnswer> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  return (url, call = {}) =>
    new Promise((resolve, reject) => {
      const req = http.request(url, { agent, method: call.method ?? "GET", headers: call.headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end(call.body);
    });
}

export function keepAliveGet(connections: number): (url: string, headers?: Record<string, string>) => Promise<HttpAnswer> {
  const send = keepAliveClient(connections);
  return (url, headers) => send(url, { headers });
}
