import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { Readable } from "node:stream";
import { BufferedResponse } from "./buffered-response";

/** Answers in these media types are handed over as they arrive; every other body is read whole first. */
const STREAMED_TYPES = /^\s*(text\/event-stream|application\/x-ndjson)\b/i;
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * A `fetch` for the inference hosts (and, with `lookup` and `streamAll`, for asset URLs) on Node,
 * over node:http(s) with keep-alive agents. The inference calls are JSON in, JSON or a stream
 * out, hundreds a second, each held open for the seconds a model takes: undici's `fetch` cost
 * about 300 µs of CPU per call here against 40 µs for node:http (measured over 20,000 calls), and
 * its web streams and per-request abort bookkeeping kept the garbage collector busy while calls
 * were in flight.
 *
 * What it does not do, because those calls never need it: follow redirects (a 3xx comes back as
 * it is: the inference client counts it as a failed host, the asset fetch checks the target and
 * follows it itself), or send a body other than a string or bytes (such requests go to the global
 * `fetch`). The caller's signal aborts the request at any point, rejecting with the signal's
 * reason as `fetch` does; a network failure rejects with a TypeError whose cause is the socket
 * error.
 */
export function createNodeHttpFetch(
  options: {
    maxSocketsPerHost?: number;
    /** Resolves the host of every connection (default: the system resolver). */
    lookup?: LookupFunction;
    /** Hand every body over as it arrives, for callers that cap what they read. */
    streamAll?: boolean;
  } = {},
): typeof fetch {
  const agentOptions = { keepAlive: true, maxSockets: options.maxSocketsPerHost ?? 256 };
  const agents = { "http:": new http.Agent(agentOptions), "https:": new https.Agent(agentOptions) };

  return (input, init = {}) => {
    const body = init.body ?? undefined;
    if (input instanceof Request || (body !== undefined && typeof body !== "string" && !(body instanceof Uint8Array))) {
      return globalThis.fetch(input, init);
    }
    const url = input instanceof URL ? input : new URL(input);
    if (url.protocol !== "http:" && url.protocol !== "https:") return Promise.reject(new TypeError(`unsupported protocol ${url.protocol}`));
    const signal = init.signal ?? undefined;
    if (signal?.aborted) return Promise.reject(signal.reason);

    return new Promise<Response>((resolve, reject) => {
      const lib = url.protocol === "https:" ? https : http;
      const req = lib.request(url, { method: init.method ?? "GET", headers: headerRecord(init.headers), agent: agents[url.protocol as "http:" | "https:"], lookup: options.lookup });
      let settled = false;
      let response: http.IncomingMessage | undefined;
      const onAbort = () => {
        const reason = signal?.reason;
        req.destroy();
        response?.destroy(reason instanceof Error ? reason : undefined);
        if (!settled) {
          settled = true;
          reject(reason);
        }
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const done = () => signal?.removeEventListener("abort", onAbort);

      req.on("error", (err) => {
        done();
        if (settled) return;
        settled = true;
        reject(new TypeError("fetch failed", { cause: err }));
      });
      req.on("response", (res) => {
        response = res;
        const init = { status: res.statusCode ?? 502, statusText: res.statusMessage, headers: responseHeaders(res) };
        if (NULL_BODY_STATUSES.has(init.status)) {
          res.resume();
          done();
          settled = true;
          resolve(new Response(null, init));
          return;
        }
        if (options.streamAll || STREAMED_TYPES.test(String(res.headers["content-type"] ?? ""))) {
          res.once("close", done);
          settled = true;
          resolve(new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, init));
          return;
        }
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.once("error", (err) => {
          done();
          if (settled) return;
          settled = true;
          reject(new TypeError("fetch failed", { cause: err }));
        });
        res.once("end", () => {
          done();
          if (settled) return;
          settled = true;
          const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
          if (!bytes || bytes.length === 0) return resolve(new Response(null, init));
          resolve(new BufferedResponse(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) as Uint8Array<ArrayBuffer>, init));
        });
      });
      req.end(body);
    });
  };
}

function headerRecord(headers: HeadersInit | undefined): Record<string, string> {
  if (!headers) return {};
  if (headers instanceof Headers) return Object.fromEntries(headers);
  if (Array.isArray(headers)) return Object.fromEntries(headers);
  return headers as Record<string, string>;
}

function responseHeaders(res: http.IncomingMessage): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) out.push([res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string]);
  return out;
}
