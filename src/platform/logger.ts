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

/**
 * Credentials never reach a log line, whatever a caller passes in: every string of a record (the
 * message, each field at any depth, an error's message and stack) goes through these shapes, and
 * a field whose name says it holds a credential is dropped whole. One redactor for every line,
 * so no call site has to remember it.
 */
const SECRET_NAME = /authorization|cookie|token|secret|password|passkey|passphrase|api[-_]?key|signature|credential|verification[-_]?hash/i;
const SECRET_SHAPES: readonly [RegExp, string][] = [
  // An Authorization value, whatever the credential.
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, "$1 [redacted]"],
  // A JWT (JWS) or JWE: a base64url JSON header, then dot-separated parts.
  [/eyJ[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*){1,4}/g, "[redacted-jwt]"],
  // Standard Webhooks secrets: base64, whose "/", "+" and "=" arrive percent-encoded in a path.
  [/whsec_(?:[A-Za-z0-9+/=_-]|%[0-9A-Fa-f]{2})*/g, "[redacted]"],
  // Our API keys and the callback and run tokens we mint are 64 hex characters; any hex run of 32
  // or more (a key, a token, a signature) goes, wherever it sits.
  [/[0-9a-fA-F]{32,}/g, "[redacted-hex]"],
  // The user and password of a URL (a database or upstream URL in a driver's message).
  [/\/\/[^/?#@\s]*@/g, "//[redacted]@"],
  // The web app's cookies by name (a Cookie or Set-Cookie line quoted in a message): the session
  // and refresh cookies carry the member's tokens, the sign-in cookie the PKCE verifier.
  [/\b((?:__Host-|__Secure-)?(?:session|refresh|signin))=[^;\s"',&]+/gi, "$1=[redacted]"],
  // A query or form parameter named like a credential: ?token=…, &api_key=…, sig=….
  [/\b([A-Za-z_-]*(?:token|secret|password|passkey|api[-_]?key|signature)|key|sig|code_verifier)=[^&\s"',;]+/gi, "$1=[redacted]"],
  // The same inside JSON quoted in a message (a provider's error body): "client_secret": "…".
  [/("[^"]*(?:authorization|token|secret|password|passkey|api[-_]?key|signature)[^"]*"\s*:\s*)"(?:[^"\\]|\\.)*"/gi, '$1"[redacted]"'],
];

/** Configured values shorter than this are not looked for: a short value would match ordinary text. */
const MIN_SECRET_LENGTH = 8;
const DEPTH = 8;
/** The access line's path is cut here, after redaction (cutting first could leave a piece of a key). */
const PATH_CHARS = 200;

/**
 * The values of configured credentials (variables named like one: `…_KEY`, `…_SECRET`,
 * `…_TOKEN`, `…_PASSKEY`, `…_PASSWORD`) and the passwords of configured URLs, so that a provider
 * secret of any shape is redacted by its value.
 */
export function configuredSecrets(config: Record<string, unknown>): string[] {
  const found: string[] = [];
  for (const [name, value] of Object.entries(config)) {
    if (typeof value !== "string") continue;
    if (/KEY|SECRET|TOKEN|PASSKEY|PASSWORD/.test(name)) found.push(value);
    else if (/^[a-z][a-z0-9+.-]*:\/\/[^/]*@/i.test(value)) {
      try {
        const url = new URL(value);
        found.push(decodeURIComponent(url.password), url.password);
      } catch {
        // Not a URL after all: nothing to take from it.
      }
    }
  }
  return [...new Set(found.filter((v) => v.length >= MIN_SECRET_LENGTH))];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export interface Redactor {
  (value: unknown): unknown;
  text(value: string): string;
}

/** The redactor of a logger: the credential shapes, plus these known values (see configuredSecrets). */
export function createRedactor(secrets: readonly string[] = []): Redactor {
  const values = secrets.filter((v) => v.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  const known = values.length > 0 ? new RegExp(values.map(escapeRegExp).join("|"), "g") : undefined;
  const text = (value: string): string => {
    let out = known ? value.replace(known, "[redacted]") : value;
    for (const [shape, replacement] of SECRET_SHAPES) out = out.replace(shape, replacement);
    return out;
  };
  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === "string") return text(value);
    if (value === null || typeof value !== "object") return value;
    // What lies deeper is not walked, so it is not written either.
    if (depth >= DEPTH) return "[too deep]";
    if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1));
    if (value instanceof Date) return value.toISOString();
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = SECRET_NAME.test(k) ? "[redacted]" : walk(v, depth + 1);
    return out;
  };
  return Object.assign((value: unknown) => walk(value, 0), { text });
}

/** Redaction by shape and field name alone (no configured values). */
export const redact: Redactor = createRedactor();

export type LogSink = (line: string) => void;

export interface LoggerOptions {
  level?: LogLevel;
  sink?: LogSink;
  clock?: () => number;
  /** Configured credential values to redact wherever they appear (configuredSecrets(config)). */
  secrets?: readonly string[];
}

/** One JSON object per line; the sink defaults to console.log, which both runtimes ship to their log pipeline. */
export function createJsonLogger(options: LoggerOptions = {}): Logger {
  const min = RANK[options.level ?? "info"];
  const sink = options.sink ?? ((line) => console.log(line));
  const now = options.clock ?? Date.now;
  const scrub = createRedactor(options.secrets);
  const write = (level: Exclude<LogLevel, "silent">, msg: string, fields?: LogFields) => {
    if (RANK[level] < min) return;
    const record = { time: new Date(now()).toISOString(), level, msg: scrub.text(msg), ...(fields === undefined ? {} : (scrub(fields) as LogFields)) };
    sink(JSON.stringify(record));
  };
  const clip = (path: string) => {
    const clean = scrub.text(path);
    return clean.length > PATH_CHARS ? `${clean.slice(0, PATH_CHARS)}…` : clean;
  };
  return {
    request: (r) => write("info", "request", { ...r, path: clip(r.path) }),
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
  };
}
