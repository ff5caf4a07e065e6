import { ApiError } from "../../errors";
import type { PartnerRow } from "../partners/profile";
import { assertWebhookUrl } from "../partners/profile";
import { parseRetryAfter } from "./retry";
import { signatureHeader } from "./signing";
import type { ClaimedMessage, OutboxWorkerDeps } from "./worker";

export const DEFAULT_TIMEOUT_MS = 15_000;
const USER_AGENT = "DatingPlatform-Webhooks/1";

/** What one send came to; `at` is when it ended, the time its outcome is recorded under. */
export type Attempt =
  | { kind: "skipped"; error: string }
  | { kind: "released" }
  | { kind: "attempted"; ok: boolean; route: string; statusCode: number | null; latencyMs: number | null; error: string | null; retryAfterMs?: number; gone?: boolean; at: number };

function liveSecrets(row: PartnerRow, now: number): string[] {
  const secrets = row.webhookSecret ? [row.webhookSecret] : [];
  if (row.webhookPreviousSecret && row.webhookPreviousSecretUntil && row.webhookPreviousSecretUntil.getTime() > now) secrets.push(row.webhookPreviousSecret);
  return secrets;
}

/** One signed POST of a claimed message to its partner's endpoint; never throws for the endpoint's faults. */
export async function sendWebhook(d: OutboxWorkerDeps, msg: ClaimedMessage, row: PartnerRow | undefined): Promise<Attempt> {
  if (!row?.webhookUrl || !row.webhookEnabled || !row.webhookSecret) return { kind: "skipped", error: "the webhook is disabled or not set" };
  const url = row.webhookUrl;
  let route = "invalid";
  try {
    route = new URL(url).host;
    // Names can change their answer after the profile was saved: checked again at every delivery.
    await assertWebhookUrl(d, url);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { kind: "attempted", ok: false, route, statusCode: null, latencyMs: null, error: `refused: ${err.message}`, at: d.clock.now() };
  }
  const now = d.clock.now();
  const timestamp = Math.floor(now / 1000);
  const headers = {
    "content-type": "application/json",
    "user-agent": USER_AGENT,
    "webhook-id": msg.id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": await signatureHeader(liveSecrets(row, now), msg.id, timestamp, msg.body),
  };
  const started = performance.now();
  const timeout = AbortSignal.timeout(d.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const signal = d.cancel ? AbortSignal.any([timeout, d.cancel]) : timeout;
  let res: Response;
  try {
    res = await d.fetch(url, { method: "POST", headers, body: msg.body, redirect: "manual", signal });
    // The answer's body is not ours to keep; read (bounded by the timeout) so the connection is reusable.
    await res.arrayBuffer().catch(() => undefined);
  } catch (err) {
    if (d.cancel?.aborted && !timeout.aborted) return { kind: "released" };
    const latencyMs = Math.round(performance.now() - started);
    const error = signal.aborted ? `timed out after ${d.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms` : `connection failed: ${err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err)}`;
    return { kind: "attempted", ok: false, route, statusCode: null, latencyMs, error, at: d.clock.now() };
  }
  const latencyMs = Math.round(performance.now() - started);
  const at = d.clock.now();
  const status = res.status;
  if (status >= 200 && status < 300) return { kind: "attempted", ok: true, route, statusCode: status, latencyMs, error: null, at };
  const base = { kind: "attempted" as const, ok: false, route, statusCode: status, latencyMs, at };
  if (status >= 300 && status < 400) return { ...base, error: `redirect (HTTP ${status}) not followed` };
  if (status === 410) return { ...base, error: "HTTP 410 Gone: the endpoint was disabled", gone: true };
  const retryAfterMs = status === 429 || status === 502 || status === 504 ? parseRetryAfter(res.headers.get("retry-after"), at) : undefined;
  return { ...base, error: `HTTP ${status}`, retryAfterMs };
}
