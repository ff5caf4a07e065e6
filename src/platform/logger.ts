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
  const write = (level: Exclude<LogLevel, "silent">, msg: string, fields?: LogFields) => {
    if (RANK[level] < min) return;
    const record = { time: new Date(now()).toISOString(), level, msg, ...(fields === undefined ? {} : (redact(fields) as LogFields)) };
    sink(JSON.stringify(record));
  };
  return {
    request: (r) => write("info", "request", { ...r }),
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
  };
}
