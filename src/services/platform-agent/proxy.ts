import { ApiError } from "../../errors";
import type { Logger } from "../../platform/logger";

/**
 * One call to the platform agent, shared by the API's `POST /api/agent` (native clients) and the
 * web app's (browsers): the caller's access token goes on as the bearer, the body streams to the
 * agent and its answer streams back as it arrives (server-sent events included), and a caller who
 * goes away cancels the agent call. This module knows nothing of Hono or of either app.
 */
export interface PlatformAgentPort {
  /** The agent's endpoint (PLATFORM_AGENT_URL); undefined when the platform runs without one. */
  url: string | undefined;
  fetch: typeof fetch;
  logger: Logger;
  /** The longest the agent may take to start answering. */
  timeoutMs: number;
}

export interface AgentCall {
  accessToken: string;
  headers: Headers;
  body: ReadableStream<Uint8Array> | null;
  requestId: string;
  /** The client's request: when it goes away, the agent call is cancelled. */
  signal?: AbortSignal;
}

export interface AgentAnswer {
  status: number;
  headers: Record<string, string>;
  body: ReadableStream<Uint8Array> | null;
}

/** Only these client headers reach the agent: never cookies or a bearer the client made up. */
const REQUEST_HEADERS = ["content-type", "content-length", "accept", "accept-language", "last-event-id"];
const RESPONSE_HEADERS = ["content-type", "content-length", "content-language", "cache-control", "retry-after"];

export const PLATFORM_AGENT_UNCONFIGURED = "the platform agent is not configured (PLATFORM_AGENT_URL)";

export async function callPlatformAgent(port: PlatformAgentPort, call: AgentCall): Promise<AgentAnswer> {
  if (!port.url) throw new ApiError("service_unavailable", PLATFORM_AGENT_UNCONFIGURED);
  const headers = new Headers();
  for (const name of REQUEST_HEADERS) {
    const value = call.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  headers.set("authorization", `Bearer ${call.accessToken}`);
  headers.set("x-request-id", call.requestId);
  // Relayed as it arrives: a compressed answer would be unpacked on the way and lose its framing.
  headers.set("accept-encoding", "identity");

  // Only the wait for the answer's headers is bounded: a streamed answer may run as long as it talks.
  const waiting = new AbortController();
  const timer = setTimeout(() => waiting.abort(new Error(`no answer within ${port.timeoutMs} ms`)), port.timeoutMs);
  const signals = call.signal ? [waiting.signal, call.signal] : [waiting.signal];
  let upstream: Response;
  try {
    upstream = await port.fetch(port.url, {
      method: "POST",
      headers,
      body: call.body,
      duplex: "half",
      redirect: "manual",
      signal: AbortSignal.any(signals),
    } as RequestInit);
  } catch (err) {
    if (call.signal?.aborted) throw new ApiError("service_unavailable", "the client went away");
    const timedOut = waiting.signal.aborted;
    port.logger.warn("platform agent call failed", { requestId: call.requestId, timedOut, err: err instanceof Error ? err.message : String(err) });
    throw new ApiError("service_unavailable", timedOut ? `the platform agent did not answer within ${port.timeoutMs} ms` : "the platform agent is unreachable");
  } finally {
    clearTimeout(timer);
  }

  if (upstream.status >= 500 || upstream.status < 200 || (upstream.status >= 300 && upstream.status < 400)) {
    await upstream.body?.cancel().catch(() => undefined);
    port.logger.warn("platform agent failed", { requestId: call.requestId, status: upstream.status });
    throw new ApiError("service_unavailable", "the platform agent is unavailable");
  }
  const answerHeaders: Record<string, string> = {};
  for (const name of RESPONSE_HEADERS) {
    const value = upstream.headers.get(name);
    if (value !== null) answerHeaders[name] = value;
  }
  const encoding = upstream.headers.get("content-encoding");
  if (encoding !== null && encoding.trim().toLowerCase() !== "identity") delete answerHeaders["content-length"];
  // Proxies in front (nginx and the like) would otherwise hold events back until a buffer fills.
  if (answerHeaders["content-type"]?.startsWith("text/event-stream")) answerHeaders["x-accel-buffering"] = "no";
  return { status: upstream.status, headers: answerHeaders, body: upstream.body ? relay(upstream.body) : null };
}

/**
 * Reads the agent's answer only as fast as the client takes it; a client that goes away cancels
 * the read, which ends the agent call.
 */
function relay(source: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (err) {
          controller.error(err);
        }
      },
      async cancel(reason) {
        await reader.cancel(reason).catch(() => undefined);
      },
    },
    { highWaterMark: 0 },
  );
}
