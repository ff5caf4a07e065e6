import type { Principal } from "../../auth/principal";
import type { AppDeps } from "../../deps";
import { ApiError, isApiError } from "../../errors";
import { IDENTITY_HEADER, signIdentity } from "./identity";

export const VOICE_TARGETS = ["agent", "stt", "tts"] as const;
export type VoiceTarget = (typeof VOICE_TARGETS)[number];

/**
 * Only these client headers reach the runtime. Everything else stays behind: the caller's bearer
 * token and cookies (the runtime trusts our identity token instead), and any identity header a
 * client made up.
 */
const REQUEST_HEADERS = ["content-type", "content-length", "accept", "accept-language"];
const RESPONSE_HEADERS = ["content-type", "content-length", "content-language", "content-disposition", "cache-control"];

export interface VoiceCall {
  target: VoiceTarget;
  /** The query string as the client sent it ("" or "?…"); the runtime reads its own options there. */
  search: string;
  headers: Headers;
  body: ReadableStream<Uint8Array> | null;
  requestId: string;
  /** The client's request: when it goes away, the runtime call is cancelled (and its AI slot freed). */
  signal?: AbortSignal;
}

export interface VoiceAnswer {
  status: number;
  headers: Record<string, string>;
  body: ReadableStream<Uint8Array> | null;
  /** Settles once the answer has been streamed to the end, failed or been abandoned by the client. */
  done: Promise<void>;
}

/**
 * Passes one voice call to the runtime and its answer back, both as streams: audio is never held
 * whole in memory. A deadline of VOICE_TIMEOUT_MS applies to every stretch with nothing moving
 * (no request bytes forwarded, no answer yet, no next chunk of the answer).
 */
export async function proxyVoice(deps: AppDeps, principal: Principal, call: VoiceCall): Promise<VoiceAnswer> {
  if (!principal.userId) throw new ApiError("unauthorized");
  const { VOICE_RUNTIME_URL: base, VOICE_RUNTIME_SECRET: secret, VOICE_TIMEOUT_MS: timeoutMs } = deps.config;
  if (!base || !secret) throw new ApiError("service_unavailable", "the voice runtime is not configured");

  const path = `/${call.target}`;
  const headers = new Headers();
  for (const name of REQUEST_HEADERS) {
    const value = call.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  headers.set("x-request-id", call.requestId);
  // The answer is relayed as it arrives, with its length: a compressed one would be unpacked by
  // fetch on the way and no longer match the Content-Length passed on.
  headers.set("accept-encoding", "identity");
  headers.set(
    IDENTITY_HEADER,
    await signIdentity(secret, { userId: principal.userId, role: principal.role, path, method: "POST", tokenId: deps.ids.next("vtk"), nowMs: deps.clock.now() }),
  );

  const deadline = new Deadline(timeoutMs);
  let answered = false;
  const body = call.body?.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        // Upload progress keeps the wait for an answer alive; once the answer streams, its own reads do.
        if (!answered) deadline.arm();
        controller.enqueue(chunk);
      },
    }),
  );

  let upstream: Response;
  deadline.arm();
  try {
    upstream = await deps.fetch(`${base}${path}${call.search}`, {
      method: "POST",
      headers,
      body,
      duplex: "half",
      redirect: "manual",
      signal: call.signal ? AbortSignal.any([deadline.signal, call.signal]) : deadline.signal,
    } as RequestInit);
  } catch (err) {
    deadline.disarm();
    const own = apiErrorIn(err);
    if (own) throw own;
    // Nobody is left to answer; not the runtime's failure.
    if (call.signal?.aborted) throw new ApiError("service_unavailable", "the client went away");
    const timedOut = deadline.expired;
    deps.logger.warn("voice runtime call failed", { requestId: call.requestId, target: call.target, timedOut, err: describe(err) });
    throw new ApiError("service_unavailable", timedOut ? `the voice runtime did not answer within ${timeoutMs} ms` : "the voice runtime is unreachable");
  }
  answered = true;
  deadline.disarm();

  if (upstream.status < 200 || upstream.status > 299) throw await runtimeRefusal(deps, call, upstream);

  const responseHeaders: Record<string, string> = {};
  for (const name of RESPONSE_HEADERS) {
    const value = upstream.headers.get(name);
    if (value !== null) responseHeaders[name] = value;
  }
  // A runtime that compresses anyway: fetch has unpacked the body, so its length is unknown.
  const encoding = upstream.headers.get("content-encoding");
  if (encoding !== null && encoding.trim().toLowerCase() !== "identity") delete responseHeaders["content-length"];
  if (!upstream.body) return { status: upstream.status, headers: responseHeaders, body: null, done: Promise.resolve() };

  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const relayed = relay(upstream.body, deadline, finish, (err) =>
    deps.logger.warn("voice answer broke off", { requestId: call.requestId, target: call.target, timedOut: deadline.expired, err: describe(err) }),
  );
  return { status: upstream.status, headers: responseHeaders, body: relayed, done };
}

/**
 * Reads the runtime's answer only as fast as the client takes it (pull-based, nothing queued
 * ahead), with the deadline running only while we wait on the runtime, not on a slow client.
 */
function relay(source: ReadableStream<Uint8Array>, deadline: Deadline, finish: () => void, onBreak: (err: unknown) => void): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        deadline.arm();
        try {
          const { done, value } = await reader.read();
          deadline.disarm();
          if (done) {
            controller.close();
            finish();
          } else {
            controller.enqueue(value);
          }
        } catch (err) {
          deadline.disarm();
          onBreak(err);
          controller.error(err);
          finish();
        }
      },
      async cancel(reason) {
        deadline.disarm();
        finish();
        await reader.cancel(reason).catch(() => undefined);
      },
    },
    { highWaterMark: 0 },
  );
}

/** What the runtime's refusal means for our client, in our error set; its own body is not passed on. */
async function runtimeRefusal(deps: AppDeps, call: VoiceCall, upstream: Response): Promise<ApiError> {
  const text = await upstream.text().catch(() => "");
  const said = runtimeMessage(text);
  const fields = { requestId: call.requestId, target: call.target, status: upstream.status, said };
  if (upstream.status === 401 || upstream.status === 403) {
    // Our identity token was refused: the secrets differ between the hosts. Not the caller's fault.
    deps.logger.error("voice runtime refused our identity token; check VOICE_RUNTIME_SECRET on both sides", fields);
    return new ApiError("service_unavailable", "the voice runtime is unavailable");
  }
  if (upstream.status === 413) return new ApiError("payload_too_large", "the voice runtime refused a body this large");
  if (upstream.status >= 400 && upstream.status < 500 && upstream.status !== 429) {
    deps.logger.info("voice runtime rejected the request", fields);
    return new ApiError("invalid_input", "the voice runtime rejected the request", { details: [{ path: "(body)", message: said ?? `runtime status ${upstream.status}` }] });
  }
  deps.logger.warn("voice runtime failed", fields);
  const retryAfter = upstream.headers.get("retry-after");
  return new ApiError("service_unavailable", upstream.status === 429 ? "the voice runtime is busy; try again shortly" : "the voice runtime is unavailable", {
    headers: retryAfter && /^\d{1,5}$/.test(retryAfter) ? { "Retry-After": retryAfter } : {},
  });
}

/** The runtime's own explanation (`message` or `error` of a JSON body, or short plain text), trimmed. */
function runtimeMessage(text: string): string | undefined {
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as { message?: unknown; error?: unknown; detail?: unknown };
    const said = [parsed.message, parsed.detail, parsed.error].find((v) => typeof v === "string");
    if (typeof said === "string") return said.slice(0, 300);
  } catch {
    // not JSON
  }
  return /^[\x20-\x7e]{1,300}$/.test(text.trim()) ? text.trim() : undefined;
}

/** Our own error (e.g. the size limit tripping inside the request stream), however deep fetch wrapped it. */
function apiErrorIn(err: unknown): ApiError | undefined {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 4; depth += 1) {
    if (isApiError(e)) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error ? `${err.message}: ${cause.message}` : err.message;
}

/** An abort that fires when armed and not re-armed or disarmed within the timeout. */
class Deadline {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  expired = false;

  constructor(private readonly ms: number) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  arm(): void {
    this.disarm();
    this.timer = setTimeout(() => {
      this.expired = true;
      this.controller.abort(new Error(`no progress for ${this.ms} ms`));
    }, this.ms);
  }

  disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
