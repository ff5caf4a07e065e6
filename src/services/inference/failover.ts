import { ConsumerError, InferenceError } from "./types";

/** Our own timer ran out on a host attempt (the caller's abort is reported as "aborted" instead). */
export class HostTimeoutError extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = "TimeoutError";
  }
}

export interface FailoverOptions<T> {
  /** In the order to try them. */
  hosts: readonly string[];
  timeoutMs: number;
  /** The caller's; once it aborts, no further host is tried and the call fails as "aborted". */
  signal?: AbortSignal;
  attempt(host: string, signal: AbortSignal): Promise<T>;
  /** A host's attempt failed or timed out (`error` is then a HostTimeoutError). */
  failed(host: string, error: unknown): void;
}

/**
 * Tries the hosts in turn until one answers, each attempt under its own timeout and the caller's
 * abort. Returns the first answer and its host; when every host failed, throws `unavailable` with
 * the last failure as its cause (message chosen by `unavailableMessage`).
 */
export async function firstAnsweringHost<T>(options: FailoverOptions<T>, unavailableMessage: (lastError: unknown) => string): Promise<{ value: T; host: string }> {
  const { signal: callerSignal, timeoutMs } = options;
  let lastError: unknown;
  for (const host of options.hosts) {
    if (callerSignal?.aborted) throw new InferenceError("aborted", "the caller went away", callerSignal.reason);
    // One controller for both ends of the attempt, the timeout and the caller leaving: cheaper
    // than AbortSignal.any, which would be on every call's path.
    const attempt = new AbortController();
    const handle = setTimeout(() => attempt.abort(new HostTimeoutError(timeoutMs)), timeoutMs);
    const callerLeft = () => attempt.abort(callerSignal?.reason);
    callerSignal?.addEventListener("abort", callerLeft, { once: true });
    try {
      return { value: await options.attempt(host, attempt.signal), host };
    } catch (err) {
      if (err instanceof ConsumerError) throw err.original;
      if (callerSignal?.aborted) throw new InferenceError("aborted", "the caller went away", err);
      // The caller's abort returned above, so an aborted controller here means the timeout.
      lastError = attempt.signal.aborted ? attempt.signal.reason : err;
      options.failed(host, lastError);
    } finally {
      clearTimeout(handle);
      callerSignal?.removeEventListener("abort", callerLeft);
    }
  }
  throw new InferenceError("unavailable", unavailableMessage(lastError), lastError);
}
