import { z } from "zod";
import { parseUrl } from "./platform/url";

/**
 * Every environment variable the platform reads, parsed once at the entry. Empty strings count
 * as unset so that `FOO=` in a shell or a blank secret behaves like an absent one.
 */
const blankToUndefined = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);
const optional = <T extends z.ZodType>(schema: T) => z.preprocess(blankToUndefined, schema.optional());
const withDefault = <T extends z.ZodType>(schema: T, fallback: z.input<T>) =>
  z.preprocess(blankToUndefined, schema.default(fallback as never));

const url = (protocols: string[], label: string) =>
  z.string().refine((v) => protocols.includes(parseUrl(v)?.protocol ?? ""), `must be a ${label} URL`);

const httpUrl = url(["http:", "https:"], "http(s)");
const urlList = z.string().transform((v, ctx) => {
  const parts = v.split(",").map((p) => p.trim()).filter(Boolean);
  for (const p of parts) {
    if (!httpUrl.safeParse(p).success) {
      ctx.addIssue({ code: "custom", message: `'${p}' is not an http(s) URL` });
      return z.NEVER;
    }
  }
  return parts.map((p) => p.replace(/\/+$/, ""));
});

/**
 * `KES=0.0077,EUR=1.08` → { KES: 0.0077, EUR: 1.08 }. Every entry must read; a typo would
 * otherwise drop a currency silently (its payments refused) or, for USD, change what every
 * payment credits.
 */
const fxRates = z.string().transform((v, ctx) => {
  const rates: Record<string, number> = {};
  for (const entry of v.split(",").map((e) => e.trim()).filter(Boolean)) {
    const m = /^([A-Za-z]{3,5})\s*=\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)$/.exec(entry);
    const code = m?.[1]?.toUpperCase();
    const rate = Number(m?.[2]);
    if (!m || !code || !(rate > 0) || !Number.isFinite(rate)) {
      ctx.addIssue({ code: "custom", message: `entry '${entry.slice(0, 40)}' is not CODE=rate with a positive rate (e.g. KES=0.0077)` });
    } else if (code === "USD") {
      ctx.addIssue({ code: "custom", message: "must not set USD: coins are priced in US cents, so its rate is always 1" });
    } else if (Object.hasOwn(rates, code)) {
      ctx.addIssue({ code: "custom", message: `sets ${code} twice` });
    } else rates[code] = rate;
  }
  return Object.freeze(rates);
});

export const configSchema = z
  .object({
    NODE_ENV: withDefault(z.enum(["development", "test", "production"]), "development"),
    PORT: withDefault(z.coerce.number().int().min(1).max(65535), 8787),
    HOST: withDefault(z.string(), "127.0.0.1"),
    LOG_LEVEL: withDefault(z.enum(["debug", "info", "warn", "error", "silent"]), "info"),
    APP_VERSION: withDefault(z.string(), "0.1.0"),
    /** Node only: HTTP worker processes (node:cluster); the Workers runtime scales by itself. */
    WEB_CONCURRENCY: withDefault(z.coerce.number().int().min(1).max(64), 1),
    /**
     * Node only: how many reverse proxies of ours sit in front, each appending to X-Forwarded-For;
     * the client's address is the entry this many from the right. 0: the socket's peer, the header
     * ignored. Set it exactly: one too many lets a client choose its address, one too few gives
     * every client the outermost proxy's. Workers take Cloudflare's CF-Connecting-IP instead.
     */
    TRUSTED_PROXY_HOPS: withDefault(z.coerce.number().int("must be a whole number of proxies").min(0).max(10), 0),

    DATABASE_URL: optional(url(["postgres:", "postgresql:"], "postgres://")),
    DATABASE_POOL_MAX: withDefault(z.coerce.number().int().min(1).max(200), 10),
    DATA_DIR: withDefault(z.string(), "./.data"),

    REDIS_URL: optional(url(["redis:", "rediss:"], "redis://")),
    UPSTASH_REDIS_REST_URL: optional(httpUrl),
    UPSTASH_REDIS_REST_TOKEN: optional(z.string()),
    /** Prefix for every key the platform writes, so several environments can share one Redis. */
    KV_PREFIX: withDefault(z.string(), ""),

    OIDC_ISSUER: optional(httpUrl),
    OIDC_AUDIENCE: optional(z.string()),
    OIDC_ROLES_CLAIM: withDefault(z.string(), "roles"),

    INFERENCE_URL: optional(urlList),
    INFERENCE_API: withDefault(z.enum(["ollama", "openai"]), "ollama"),
    INFERENCE_MODEL: optional(z.string()),
    INFERENCE_API_KEY: optional(z.string()),
    /** Per inference host attempt; a slower host counts as failed and the next one is tried. */
    INFERENCE_TIMEOUT_MS: withDefault(z.coerce.number().int().min(100).max(600_000), 30_000),
    /** How long a failed inference host is tried only after the healthy ones. */
    INFERENCE_COOLDOWN_MS: withDefault(z.coerce.number().int().min(0).max(3_600_000), 30_000),
    /** Embedding model on the inference hosts (e.g. bge-m3); without it retrieval is BM25 alone. */
    INFERENCE_EMBED_MODEL: optional(z.string().min(1)),
    /** The longest a support question waits for its query embedding before retrieving by BM25 alone. */
    INFERENCE_EMBED_TIMEOUT_MS: withDefault(z.coerce.number().int().min(50).max(60_000), 1_500),
    /** Average minutes a support video call takes; the queue's wait estimate is position × this. */
    SUPPORT_VIDEO_HANDLING_MINUTES: withDefault(z.coerce.number().int().min(1).max(240), 15),
    VOICE_RUNTIME_URL: optional(httpUrl),
    /** Key of the identity token the voice runtime verifies (HS256); without it voice answers 503. */
    VOICE_RUNTIME_SECRET: optional(z.string().min(32, "must be at least 32 characters")),
    /** The longest the voice runtime may take to start answering, and to send the next chunk. */
    VOICE_TIMEOUT_MS: withDefault(z.coerce.number().int().min(100).max(600_000), 30_000),
    /** Largest audio body a voice route accepts; larger answers 413, also mid-stream. */
    VOICE_MAX_BODY_BYTES: withDefault(z.coerce.number().int().min(1024).max(1024 * 1024 * 1024), 25 * 1024 * 1024),
    /** The platform agent's endpoint: `POST /api/agent` streams to it with the caller's token. */
    PLATFORM_AGENT_URL: optional(httpUrl),
    /** The longest the platform agent may take to start answering (503 after). */
    PLATFORM_AGENT_TIMEOUT_MS: withDefault(z.coerce.number().int().min(100).max(600_000), 30_000),
    /** The error tracker (Bugsink) whose issues the admin rollup reads; without URL and token it answers `configured: false`. */
    BUGSINK_URL: optional(httpUrl),
    BUGSINK_API_TOKEN: optional(z.string().min(1)),
    /** The longest one rollup may take reading the tracker; slower counts as unavailable. */
    BUGSINK_TIMEOUT_MS: withDefault(z.coerce.number().int().min(100).max(60_000), 5_000),
    /** The automation engine (n8n): base URL of its public API; without it sync and run answer 503. */
    N8N_URL: optional(httpUrl),
    N8N_API_KEY: optional(z.string()),
    /** Base of the engine's production webhooks; defaults to N8N_URL + /webhook. */
    N8N_WEBHOOK_URL: optional(httpUrl),
    WORKFLOW_CALLBACK_SECRET: optional(z.string().min(16, "must be at least 16 characters")),
    /**
     * Where the engine posts a run's state (this API's `/api/v1/messaging/workflows/status` as the
     * engine reaches it). Outside production a manual run defaults to the request's origin; event
     * runs need it.
     */
    WORKFLOW_STATUS_URL: optional(httpUrl),
    /** Names of the engine's credentials the compiled nodes reference; the secrets stay in the engine. */
    N8N_GATEWAY_CREDENTIAL: withDefault(z.string().min(1), "Messaging gateway"),
    N8N_SMTP_CREDENTIAL: withDefault(z.string().min(1), "SMTP"),
    /** The push/SMS/in-app gateway the engine posts messages to (`<url>/<channel>`). */
    MESSAGING_GATEWAY_URL: optional(httpUrl),
    MESSAGING_EMAIL_FROM: optional(z.email()),
    OBSERVABILITY_TOKEN: optional(z.string().min(16, "must be at least 16 characters")),
    AGENTS_HOST: optional(z.string()),
    /** The most coins one transfer or award may move; larger amounts answer 400. */
    WALLET_MAX_TRANSFER: withDefault(z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER), 1_000_000),

    CARD_A_API_URL: optional(httpUrl),
    CARD_A_API_KEY: optional(z.string()),
    CARD_A_STORE_ID: optional(z.string()),
    CARD_A_VARIANT_ID: optional(z.string()),
    CARD_A_WEBHOOK_SECRET: optional(z.string()),
    /** The store's currency: card-a charges a checkout's custom price in it and in nothing else. */
    CARD_A_CURRENCY: withDefault(
      z.string().regex(/^[A-Za-z]{3}$/, "an ISO 4217 code").transform((c) => c.toUpperCase()),
      "USD",
    ),
    CARD_B_API_URL: optional(httpUrl),
    CARD_B_SECRET_KEY: optional(z.string()),
    CARD_B_WEBHOOK_SECRET: optional(z.string()),
    CRYPTO_API_URL: optional(httpUrl),
    CRYPTO_API_KEY: optional(z.string()),
    CRYPTO_IPN_SECRET: optional(z.string()),
    MOBILE_MONEY_API_URL: optional(httpUrl),
    MOBILE_MONEY_CONSUMER_KEY: optional(z.string()),
    MOBILE_MONEY_CONSUMER_SECRET: optional(z.string()),
    MOBILE_MONEY_SHORTCODE: optional(z.string()),
    MOBILE_MONEY_PASSKEY: optional(z.string()),
    MOBILE_MONEY_CALLBACK_URL: optional(httpUrl),
    /**
     * How this API is reached from outside (card-b redirect, crypto IPN URL). Required in production
     * with card-b or crypto configured; elsewhere it defaults to the request's origin.
     */
    PAYMENTS_PUBLIC_URL: optional(httpUrl),
    /** US dollars per unit of each other currency, e.g. `KES=0.0077,EUR=1.08`; USD is always 1. */
    PAYMENT_FX_RATES: withDefault(fxRates, ""),
    /** The most coins one payment may credit. */
    PAYMENT_MAX_COINS: withDefault(z.coerce.number().int().min(51).max(Number.MAX_SAFE_INTEGER), 1_000_000),
    /** Each call to a payment provider gives up after this long (502 provider_error). */
    PAYMENT_PROVIDER_TIMEOUT_MS: withDefault(z.coerce.number().int().min(100).max(120_000), 10_000),
    /** How long a crypto payment intent waits for its coins; past it the intent expires. */
    CRYPTO_INTENT_TTL_SECONDS: withDefault(z.coerce.number().int().min(60).max(7 * 86_400), 3_600),
    /** Reconciliation re-checks with the provider payments pending at least this long. */
    PAYMENT_RECONCILE_AFTER_SECONDS: withDefault(z.coerce.number().int().min(0).max(30 * 86_400), 900),
    /** Reconciliation expires payments still pending (and not paid at the provider) after this long. */
    PAYMENT_EXPIRE_AFTER_SECONDS: withDefault(z.coerce.number().int().min(60).max(90 * 86_400), 86_400),
    /**
     * How long one reconciliation pass may go on asking providers; what it has not asked by then
     * waits for the next pass. Keep it well under the interval between passes.
     */
    PAYMENT_RECONCILE_BUDGET_SECONDS: withDefault(z.coerce.number().int().min(1).max(3_600), 120),
    /** Node only: how often the reconciliation runs in-process; 0 turns it off (Workers use the cron trigger). */
    PAYMENT_RECONCILE_INTERVAL_SECONDS: withDefault(z.coerce.number().int().min(0).max(86_400), 300),
  });

export type ConfigIssue = { variable: string; message: string };

/** The providers we hand a URL of ours to call back, with the variables that configure each. */
const CALLBACK_PROVIDERS = {
  "card-b": ["CARD_B_API_URL", "CARD_B_SECRET_KEY", "CARD_B_WEBHOOK_SECRET"],
  crypto: ["CRYPTO_API_URL", "CRYPTO_API_KEY", "CRYPTO_IPN_SECRET"],
};

/**
 * The rules that tie variables together. Read from the raw environment (blank = unset) rather
 * than after parsing, so that they are reported with any malformed field in the same message:
 * a deployment learns every variable to fix at once.
 */
function crossFieldIssues(env: Record<string, unknown>): ConfigIssue[] {
  const set = (name: string) => blankToUndefined(env[name]) !== undefined;
  const issues: ConfigIssue[] = [];
  if (set("UPSTASH_REDIS_REST_URL") && !set("UPSTASH_REDIS_REST_TOKEN")) {
    issues.push({ variable: "UPSTASH_REDIS_REST_TOKEN", message: "is required when UPSTASH_REDIS_REST_URL is set" });
  }
  // Workers share nothing but the database and the store: the embedded database opens in one
  // process only, and an in-process store would give each worker its own rate limits.
  if (Number(blankToUndefined(env.WEB_CONCURRENCY) ?? 1) > 1) {
    if (!set("DATABASE_URL")) issues.push({ variable: "DATABASE_URL", message: "is required when WEB_CONCURRENCY is above 1 (the embedded database serves one process)" });
    if (!set("REDIS_URL") && !set("UPSTASH_REDIS_REST_URL")) {
      issues.push({ variable: "REDIS_URL", message: "or UPSTASH_REDIS_REST_URL is required when WEB_CONCURRENCY is above 1 (the in-process store is one worker's own)" });
    }
  }
  if (set("OIDC_ISSUER") && !set("OIDC_AUDIENCE")) issues.push({ variable: "OIDC_AUDIENCE", message: "is required when OIDC_ISSUER is set" });
  // card-a charges in its store's currency only, so without a rate every checkout would be refused
  // as if the client had asked for a wrong currency: a configuration error, caught at the start.
  const cardACurrency = blankToUndefined(env.CARD_A_CURRENCY);
  if (typeof cardACurrency === "string") {
    const code = cardACurrency.trim().toUpperCase();
    const rates = fxRates.safeParse(blankToUndefined(env.PAYMENT_FX_RATES) ?? "");
    // A malformed code or rate table is reported by its own field.
    if (/^[A-Z]{3}$/.test(code) && code !== "USD" && rates.success && !Object.hasOwn(rates.data, code)) {
      issues.push({ variable: "CARD_A_CURRENCY", message: `is ${code}, which PAYMENT_FX_RATES gives no rate for` });
      issues.push({ variable: "PAYMENT_FX_RATES", message: `needs ${code}=<US dollars per ${code}> for CARD_A_CURRENCY` });
    }
  }
  const nodeEnv = blankToUndefined(env.NODE_ENV);
  const production = typeof nodeEnv === "string" && nodeEnv.trim() === "production";
  if (production && !set("OIDC_ISSUER")) {
    issues.push({ variable: "OIDC_ISSUER", message: "is required in production (the development issuer is never used there)" });
  }
  // Tokens are verified with keys fetched from the issuer: over plain http anyone on the path
  // could hand us their own keys. Loopback (a sidecar on the same host) is the one exception.
  if (production && set("OIDC_ISSUER") && !secureOrLoopback(String(env.OIDC_ISSUER).trim())) {
    issues.push({ variable: "OIDC_ISSUER", message: "must be an https URL in production (http only for a loopback address)" });
  }
  // Their callback URLs (card-b's redirect_url, the crypto ipn_callback_url) would otherwise come
  // from the request's Host, which the caller chooses, or which a proxy in front rewrites.
  const callbackProviders = Object.entries(CALLBACK_PROVIDERS)
    .filter(([, variables]) => variables.every(set))
    .map(([provider]) => provider);
  if (production && !set("PAYMENTS_PUBLIC_URL") && callbackProviders.length > 0) {
    issues.push({ variable: "PAYMENTS_PUBLIC_URL", message: `is required in production when ${callbackProviders.join(" or ")} payments are configured` });
  }
  return issues;
}

function secureOrLoopback(raw: string): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return true; // the field's own rule reports it
  }
  return url.protocol === "https:" || ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
}

/** Every problem with the environment, field by field and across fields; the config when there is none. */
export function checkConfig(env: Record<string, unknown>): { config: Config; issues: [] } | { config: undefined; issues: ConfigIssue[] } {
  const result = configSchema.safeParse(env);
  const issues = result.success ? [] : result.error.issues.map((issue) => ({ variable: String(issue.path[0] ?? "environment"), message: issue.message }));
  issues.push(...crossFieldIssues(env));
  return result.success && issues.length === 0 ? { config: result.data, issues: [] } : { config: undefined, issues };
}

export type Config = z.output<typeof configSchema>;

export class ConfigError extends Error {
  readonly variables: string[];
  constructor(issues: ConfigIssue[]) {
    super(`invalid configuration: ${issues.map((i) => `${i.variable} ${i.message}`).join("; ")}`);
    this.name = "ConfigError";
    this.variables = issues.map((i) => i.variable);
  }
}

/** Parses the environment once; throws a ConfigError that names every bad variable. */
export function parseConfig(env: Record<string, unknown>): Config {
  const { config, issues } = checkConfig(env);
  if (config === undefined) throw new ConfigError(issues);
  return config;
}
