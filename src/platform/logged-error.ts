/**
 * A failed query's message lists every bound value ("params: …"): key hashes, e-mail addresses,
 * phone numbers. The query text stays in the log; the values do not.
 */
export function withoutParams(text: string): string {
  const at = text.indexOf("\nparams: ");
  if (at < 0) return text;
  // A stack goes on with its frames after the message; a value may itself hold line breaks.
  const frames = text.indexOf("\n    at ", at);
  return `${text.slice(0, at)}\nparams: (not logged)${frames < 0 ? "" : text.slice(frames)}`;
}

/** How many causes deep an error is followed; a cycle or a long chain stops here. */
const MAX_CAUSES = 3;

/**
 * An error as a log field, for every place that logs a failure it caught. drizzle wraps the
 * driver's error ("Failed query: … params: …") and keeps the driver's own in `cause`: that is
 * where the reason is (`relation "events" does not exist`, `Connection terminated`), so the
 * cause is logged too, each level without bound values. Only the Postgres error code is taken
 * from the driver's fields: `detail` and `where` quote row values.
 */
export function loggedError(err: unknown, depth = 0): unknown {
  if (!(err instanceof Error)) return withoutParams(String(err));
  const fields: Record<string, unknown> = { name: err.name, message: withoutParams(err.message) };
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string") fields.code = code;
  if (err.stack) fields.stack = withoutParams(err.stack);
  if (err.cause !== undefined && depth < MAX_CAUSES) fields.cause = loggedError(err.cause, depth + 1);
  return fields;
}
