export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** The one access line per request, at info level (msg "request"). */
  request(record: AccessRecord): void;
}

export interface AccessRecord {
  requestId: string;
  method: string;
  /** The matched route pattern, or "/*" when none matched. */
  route: string;
  path: string;
  status: number;
  durationMs: number;
  userId?: string;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

// Credentials must never reach a log line, whatever a caller passes in.
const SECRET_KEYS = /authorization|cookie|token|secret|password|passkey|api[-_]?key/i;
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;
const JWT = /\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;

const SUSPECT = /Bearer|Basic|eyJ/;

// Log records reuse a handful of field names: each is checked against SECRET_KEYS and encoded
// once (null marks a name whose value must be redacted).
const encodedKeys = new Map<string, string | null>();
function encodedKey(key: string): string | null {
  let encoded = encodedKeys.get(key);
  if (encoded === undefined) {
    encoded = SECRET_KEYS.test(key) ? null : `,${JSON.stringify(key)}:`;
    if (encodedKeys.size < 1024) encodedKeys.set(key, encoded);
  }
  return encoded;
}

/**
 * The members of a flat record as JSON (",\"k\":v…"), or undefined when a value is nested or
 * anything could hold a credential; those records go through redact() instead.
 */
function encodeFlatAndSafe(fields: LogFields): string | undefined {
  let out = "";
  for (const key in fields) {
    const v = fields[key];
    if (v === undefined || typeof v === "function" || typeof v === "symbol") continue;
    const name = encodedKey(key);
    if (name === null) return undefined;
    if (typeof v === "string") {
      if (SUSPECT.test(v)) return undefined;
      out += name + JSON.stringify(v);
    } else if (typeof v === "number" || typeof v === "boolean" || v === null) {
      out += name + JSON.stringify(v);
    } else return undefined;
  }
  return out;
}

export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return SUSPECT.test(value) ? value.replace(BEARER, "$1 [redacted]").replace(JWT, "[redacted-jwt]") : value;
  if (depth > 6 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEYS.test(k) ? "[redacted]" : redact(v, depth + 1);
  return out;
}

export type LogSink = (line: string) => void;

/** One JSON object per line; the sink defaults to console.log, which both runtimes ship to their log pipeline. */
export function createJsonLogger(options: { level?: LogLevel; sink?: LogSink; clock?: () => number } = {}): Logger {
  const min = RANK[options.level ?? "info"];
  const sink = options.sink ?? ((line) => console.log(line));
  const now = options.clock ?? Date.now;
  // Lines in the same millisecond share one formatted timestamp.
  let stampedAt = Number.NaN;
  let stamp = "";
  const timestamp = () => {
    const at = now();
    if (at !== stampedAt) {
      stampedAt = at;
      stamp = new Date(at).toISOString();
    }
    return stamp;
  };
  const write = (level: Exclude<LogLevel, "silent">, msg: string, fields?: LogFields) => {
    if (RANK[level] < min) return;
    const head = `{"time":"${timestamp()}","level":"${level}","msg":${JSON.stringify(msg)}`;
    if (fields === undefined) return sink(`${head}}`);
    // A flat, clean record is encoded as it is, without the redacting copy.
    const members = encodeFlatAndSafe(fields);
    if (members !== undefined) return sink(`${head}${members}}`);
    const rest = JSON.stringify(redact(fields));
    sink(rest.length > 2 ? `${head},${rest.slice(1)}` : `${head}}`);
  };
  // Written for every request, so its fixed fields are encoded directly instead of through the
  // generic walk. The strings a client chooses (path, an incoming request id, the user id from a
  // token) are checked for credentials; a line carrying one takes the redacting path.
  const request = (r: AccessRecord) => {
    if (RANK.info < min) return;
    if (SUSPECT.test(r.path) || SUSPECT.test(r.requestId) || (r.userId !== undefined && SUSPECT.test(r.userId))) return write("info", "request", { ...r });
    const user = r.userId === undefined ? "" : `,"userId":${JSON.stringify(r.userId)}`;
    sink(
      `{"time":"${timestamp()}","level":"info","msg":"request","requestId":${JSON.stringify(r.requestId)},"method":${JSON.stringify(r.method)},"route":${JSON.stringify(r.route)},"path":${JSON.stringify(r.path)},"status":${r.status},"durationMs":${r.durationMs}${user}}`,
    );
  };
  return {
    request,
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
  };
}
