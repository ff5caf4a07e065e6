import { ApiError } from "../../errors";
import { hasUnsafeText } from "../../platform/text";

/**
 * What a verified provider notification may carry. Its signature (or hash, or token) says who sent
 * it, not that it has the shape we expect, so anything unexpected is a 400 that changes nothing,
 * never a 500 that the provider would retry for ever.
 */

/** A JSON object, the only body a provider sends; `null`, an array or a scalar is refused. */
export function asObject(value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new ApiError("invalid_input", `${what} is not a JSON object`);
  return value as Record<string, unknown>;
}

/** The raw body as a JSON object; a body that does not parse is refused like any other unexpected one. */
export function parseObject(rawBody: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(rawBody);
  } catch {
    throw new ApiError("invalid_input", `${what} is not JSON`);
  }
  return asObject(value, what);
}

/** Longer than any id a provider or we hand out. */
const MAX_ID_LENGTH = 255;
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * An id the body names (ours or the provider's), as text: a string or a number. Another type is
 * absent (undefined: the caller treats the event as not for us); a string with control characters
 * or text the database cannot keep (NUL, a lone surrogate), or longer than any id, is a 400.
 */
export function idField(value: unknown, path: string): string | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : undefined;
  return stringId(value, path);
}

/** As idField, for an id that is only ever a string: a number there is no id either. */
export function stringId(value: unknown, path: string): string | undefined {
  if (typeof value !== "string") return undefined;
  if (value.length > MAX_ID_LENGTH || CONTROL.test(value) || hasUnsafeText(value)) {
    throw new ApiError("invalid_input", "the notification names an id that cannot be one", { details: [{ path, message: `at most ${MAX_ID_LENGTH} characters, no control characters` }] });
  }
  return value;
}
