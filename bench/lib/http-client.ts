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

export interface KeepAliveClient {
  (url: string, call?: HttpCall): Promise<HttpAnswer>;
  /** Closes the client's sockets, so a run does not leave its connections to the server's timeout. */
  close(): void;
}

/**
 * A lean keep-alive client for closed-loop benches: node:http with one socket per concurrent
 * client. fetch() costs the load generator several times more CPU per request, and on a
 * two-core machine that CPU is taken from the server being measured.
 */
export function keepAliveClient(connections: number): KeepAliveClient {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const send = (url: string, call: HttpCall = {}) =>
    new Promise<HttpAnswer>((resolve, reject) => {
      const req = http.request(url, { agent, method: call.method ?? "GET", headers: call.headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end(call.body);
    });
  return Object.assign(send, { close: () => agent.destroy() });
}

export function keepAliveGet(connections: number): (url: string, headers?: Record<string, string>) => Promise<HttpAnswer> {
  const send = keepAliveClient(connections);
  return (url, headers) => send(url, { headers });
}
