import { REFERENCE_SCRIPT_PATH } from "../../src/routes/docs";

/**
 * Every route of the API, in one list. The auth-matrix test walks it, and fails when the app
 * registers a route this list does not name, so no route can ship without its security checks.
 */
export type Access = "public" | "user" | "admin" | "ai" | "observability" | "webhook";

export interface RouteCase {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The OpenAPI path template, e.g. /api/v1/admin/api-keys/{keyId}. */
  template: string;
  access: Access;
  /** A concrete path to call; defaults to the template with ids filled by `sample_…`. */
  path?: string;
  /** A valid body, so that an authorised caller gets past validation. */
  body?: unknown;
}

export const ROUTES: RouteCase[] = [
  { method: "GET", template: "/health", access: "public" },
  // The browsable API reference and its script (decisions.md: /docs is public).
  { method: "GET", template: "/docs", access: "public" },
  { method: "GET", template: REFERENCE_SCRIPT_PATH, access: "public" },
  { method: "GET", template: "/v1/auth/test", access: "user" },
  { method: "POST", template: "/api/v1/admin/api-keys", access: "admin", body: { name: "matrix" } },
  { method: "GET", template: "/api/v1/admin/api-keys", access: "admin" },
  { method: "DELETE", template: "/api/v1/admin/api-keys/{keyId}", access: "admin" },
  { method: "POST", template: "/api/v1/admin/observability/vms/{vmId}/heartbeat", access: "observability", body: { cpuPercent: 12 } },
  { method: "GET", template: "/api/v1/admin/observability/vms", access: "admin" },
  { method: "GET", template: "/api/v1/wallet/overview", access: "user" },
  { method: "POST", template: "/api/v1/wallet/transfer", access: "user", body: { toUserId: "usr_nobody", amount: 1 } },
  { method: "POST", template: "/api/v1/wallet/coins/award", access: "admin", body: { userId: "usr_nobody", amount: 1, reason: "matrix" } },
  { method: "GET", template: "/api/v1/wallet/leaderboard", access: "user" },
  { method: "GET", template: "/api/v1/wallet/transactions", access: "user" },
  { method: "GET", template: "/api/v1/subscriptions/plans", access: "user" },
  { method: "GET", template: "/api/v1/subscriptions/current", access: "user" },
  { method: "POST", template: "/api/v1/subscriptions", access: "user", body: { planId: "premium" } },
  { method: "GET", template: "/api/v1/admin/coins/mint/state", access: "admin" },
  { method: "GET", template: "/api/v1/profiles/discover", access: "user" },
  { method: "GET", template: "/api/v1/profile", access: "user" },
  { method: "PUT", template: "/api/v1/profile", access: "user", body: { displayName: "Matrix", birthDate: "1990-01-01", gender: "other", interestedIn: ["woman"] } },
  { method: "GET", template: "/api/v1/profile/{userId}", access: "user" },
  { method: "POST", template: "/api/v1/blocks", access: "user", body: { userId: "usr_00000000000000000000000000" } },
  { method: "GET", template: "/api/v1/blocks", access: "user" },
  { method: "DELETE", template: "/api/v1/blocks/{userId}", access: "user" },
  { method: "POST", template: "/api/v1/reports", access: "user", body: { userId: "usr_00000000000000000000000000", reason: "spam" } },
  { method: "POST", template: "/api/matching/swipe", access: "user", body: { targetUserId: "usr_nobody", action: "like" } },
  { method: "POST", template: "/api/v1/winks", access: "user", body: { toUserId: "usr_nobody" } },
  { method: "GET", template: "/api/v1/winks/received", access: "user" },
  { method: "POST", template: "/api/v1/winks/{winkId}/accept", access: "user" },
  { method: "POST", template: "/api/v1/winks/{winkId}/decline", access: "user" },
  { method: "GET", template: "/api/v1/matches", access: "user" },
  // A malformed Last-Event-ID answers 400 at once; a valid call would hold the stream open.
  { method: "GET", template: "/api/v1/matches/events", access: "user", path: "/api/v1/matches/events?lastEventId=not-an-id" },
  { method: "DELETE", template: "/api/v1/matches/{matchId}", access: "user" },
  { method: "POST", template: "/api/payments/card-a/checkout", access: "user", body: { amount: 500, currency: "USD" } },
  { method: "POST", template: "/api/v1/payments/card-b/card-collection", access: "user", body: { amount: 10, phoneNumber: "+15550100", email: "matrix@example.test" } },
  { method: "POST", template: "/api/payments/crypto/create", access: "user", body: { amount: 10, currency: "BTC" } },
  { method: "POST", template: "/api/v1/mobile-money/stk-push", access: "user", body: { phoneNumber: "0712345678", amount: 100 } },
  { method: "GET", template: "/api/payments/{paymentId}/status", access: "user" },
  // Provider callbacks: no bearer token; each is verified by its own signature, hash or URL token.
  { method: "POST", template: "/api/payments/card-a/webhook", access: "webhook", body: {} },
  { method: "POST", template: "/api/v1/payments/card-b/webhook", access: "webhook", body: {} },
  { method: "POST", template: "/api/payments/crypto/ipn", access: "webhook", body: {} },
  { method: "POST", template: "/api/v1/mobile-money/callback/{token}", access: "webhook", body: {} },
  // The browser's return from card-b shows a state and changes nothing.
  { method: "GET", template: "/api/v1/payments/card-b/redirect", access: "public", path: "/api/v1/payments/card-b/redirect?tx_ref=cbtx_matrix" },
  { method: "GET", template: "/api/v1/kb", access: "user" },
  { method: "PUT", template: "/api/v1/kb", access: "admin", body: { content: "# Matrix\n\nA section." } },
  { method: "GET", template: "/api/v1/kb/versions", access: "admin" },
  { method: "GET", template: "/api/v1/kb/assets", access: "user" },
  { method: "POST", template: "/api/v1/kb/assets", access: "admin", body: { url: "http://127.0.0.1/refused" } },
  { method: "DELETE", template: "/api/v1/kb/assets/{assetId}", access: "admin" },
  { method: "POST", template: "/api/v1/ai-agents/support/chat", access: "ai", body: { message: "How do I buy coins?" } },
  { method: "POST", template: "/api/v1/voice/agent", access: "ai" },
  { method: "POST", template: "/api/v1/voice/stt", access: "ai" },
  { method: "POST", template: "/api/v1/voice/tts", access: "ai" },
  { method: "GET", template: "/api/v1/ai-agents/health", access: "public" },
  { method: "POST", template: "/api/v1/ai-agents/support-video/request", access: "ai", body: { reason: "The app crashes on start", platform: "web" } },
  { method: "POST", template: "/api/v1/ai-agents/chat/response", access: "ai", body: { message: "Hello there!", userId: "usr_nobody" } },
  { method: "POST", template: "/api/v1/ai-agents/bio/rewrite", access: "ai", body: { currentBio: "I like long walks.", style: "casual" } },
  { method: "POST", template: "/api/v1/ai-agents/bio/optimize", access: "ai", body: { currentBio: "I like long walks.", style: "casual" } },
  {
    method: "POST",
    template: "/api/v1/ai-agents/match/predict",
    access: "ai",
    body: { user1Profile: "Loves hiking, coffee and jazz concerts.", user2Profile: "Jazz fan who hikes every weekend with coffee." },
  },
  { method: "POST", template: "/api/v1/ai-agents/experiences/pricing", access: "ai", body: { experienceType: "dinner", location: "Nairobi", duration: 120 } },
  { method: "GET", template: "/api/v1/ai-agents/context/stats", access: "admin" },
  { method: "POST", template: "/api/v1/ai-agents/context/invalidate/{userId}", access: "admin" },
];

/**
 * Every payment provider configured (so webhooks check their signatures), and every outside
 * party pointing at a closed loopback port.
 */
export const OUTSIDE_PARTIES_UNREACHABLE = {
  CARD_A_API_URL: "http://127.0.0.1:9",
  CARD_A_API_KEY: "k",
  CARD_A_STORE_ID: "1",
  CARD_A_VARIANT_ID: "1",
  CARD_A_WEBHOOK_SECRET: "matrix-card-a",
  CARD_B_API_URL: "http://127.0.0.1:9",
  CARD_B_SECRET_KEY: "k",
  CARD_B_WEBHOOK_SECRET: "matrix-card-b",
  CRYPTO_API_URL: "http://127.0.0.1:9",
  CRYPTO_API_KEY: "k",
  CRYPTO_IPN_SECRET: "matrix-crypto",
  MOBILE_MONEY_API_URL: "http://127.0.0.1:9",
  MOBILE_MONEY_CONSUMER_KEY: "k",
  MOBILE_MONEY_CONSUMER_SECRET: "s",
  MOBILE_MONEY_SHORTCODE: "174379",
  MOBILE_MONEY_PASSKEY: "p",
  MOBILE_MONEY_CALLBACK_URL: "https://api.example.test/api/v1/mobile-money/callback",
  PAYMENT_FX_RATES: "KES=0.01",
};

export function concretePath(route: RouteCase): string {
  return route.path ?? route.template.replace(/\{(\w+)\}/g, (_m, name: string) => `sample_${name}`);
}
