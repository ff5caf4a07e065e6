import { ApiError } from "../../errors";
import type { PaymentDeps, Provider } from "./context";
import { parseUrl } from "../../platform/url";

/** A provider call that failed: it timed out, could not connect, or answered an error. */
export class ProviderFailure extends Error {
  constructor(
    readonly provider: Provider,
    readonly reason: "timeout" | "network" | "status" | "body",
    message: string,
    readonly status?: number,
    readonly body?: unknown,
  ) {
    super(`${provider}: ${message}`);
    this.name = "ProviderFailure";
  }

  /** Whether the provider may have acted on the request: it was sent, and no answer came back. */
  get outcomeUnknown(): boolean {
    return this.reason === "timeout" || this.reason === "network";
  }

  /** `pending` names our record of a request the provider may still carry out. */
  toApiError(pending?: { paymentId: string; what: string }): ApiError {
    const what = this.reason === "timeout" ? "did not answer in time" : this.reason === "status" ? `answered ${this.status}` : "could not be reached";
    const message = `the ${this.provider} payment provider ${this.reason === "body" ? "answered something unexpected" : what}`;
    if (!pending) return new ApiError("provider_error", message, { cause: this });
    return new ApiError("provider_error", `${message}; ${pending.what}, so payment ${pending.paymentId} stays pending: GET /api/payments/${pending.paymentId}/status tells how it ends`, {
      cause: this,
      effectMayExist: true,
    });
  }
}

/**
 * One JSON call to a provider through deps.fetch, bounded by PAYMENT_PROVIDER_TIMEOUT_MS. Errors
 * answers keep their parsed body, since some providers (mobile money's status query) answer a
 * still-running transaction with an error status.
 */
export async function callProvider<T>(deps: PaymentDeps, provider: Provider, url: string, init: RequestInit & { json?: unknown }): Promise<T> {
  const { json, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (json !== undefined && !headers.has("content-type")) headers.set("content-type", "application/json");
  if (!headers.has("accept")) headers.set("accept", "application/json");
  let res: Response;
  try {
    res = await deps.fetch(url, {
      ...rest,
      headers,
      body: json === undefined ? rest.body : JSON.stringify(json),
      signal: AbortSignal.timeout(deps.config.PAYMENT_PROVIDER_TIMEOUT_MS),
    });
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    throw new ProviderFailure(provider, timedOut ? "timeout" : "network", timedOut ? "timed out" : String(err));
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    throw new ProviderFailure(provider, "timeout", `body not read: ${String(err)}`);
  }
  let body: unknown;
  try {
    body = text === "" ? null : JSON.parse(text);
  } catch {
    body = text;
  }
  if (!res.ok) throw new ProviderFailure(provider, "status", `HTTP ${res.status}`, res.status, body);
  return body as T;
}

export function expectString(provider: Provider, value: unknown, what: string): string {
  if (typeof value === "string" && value !== "") return value;
  if (typeof value === "number") return String(value);
  throw new ProviderFailure(provider, "body", `no ${what} in the answer`);
}

/**
 * A hosted checkout link the payer will be sent to: only an absolute http(s) URL is one. Anything
 * else (a relative path, `javascript:`, a string with spaces) is a garbage answer, so the payment
 * fails and its key is freed rather than a link we cannot vouch for reaching the payer.
 */
export function expectCheckoutUrl(provider: Provider, value: unknown, what: string): string {
  const link = expectString(provider, value, what);
  // URL() would quietly drop tabs and line breaks and encode spaces: a link holding any is refused.
  const protocol = /[\s\u0000-\u001f\u007f]/.test(link) ? undefined : parseUrl(link)?.protocol;
  if (protocol === "http:" || protocol === "https:") return link;
  throw new ProviderFailure(provider, "body", `${what} in the answer is not an http(s) URL`);
}
