import { REFERENCE_SCRIPT_PATH } from "../../src/routes/docs";

/**
 * Every route of the API, in one list: adding a route is one entry here, with the status its right
 * caller gets. The auth-matrix test walks the list (test/support/auth-matrix.ts) and fails when the
 * app registers a route the list does not name, so no route can ship without its security checks.
 *
 * `expect` is exact, never a range: a 2xx, or the documented 4xx that the entry's body (or its
 * sample ids, `sample_<name>`) leads to for a fresh caller, with a comment saying why. The matrix
 * runs each entry with a fresh member (or admin) token and with a fresh admin API key; `apiKey`
 * is the status for the key where it differs (API keys act as the admin who made them, except
 * where docs/api/authentication.md says a route refuses them). Outside parties are loopback fakes
 * (test/integration/auth-matrix.test.ts), so routes that call them succeed.
 */
export type Access = "public" | "user" | "admin" | "ai" | "observability" | "webhook";

export interface RouteCase {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The OpenAPI path template, e.g. /api/v1/admin/api-keys/{keyId}. */
  template: string;
  access: Access;
  /** The status the right caller gets (public routes: any caller, without credentials). */
  expect: number;
  /** What an admin API key gets where it differs from `expect`. */
  apiKey?: number;
  /** A concrete path to call; defaults to the template with ids filled by `sample_…`. */
  path?: string;
  /** A valid body, so that an authorised caller gets past validation. */
  body?: unknown;
  /**
   * For a route that acts on another member by id: the call aimed at member `id`. The matrix then
   * checks the visibility rule (docs/api/privacy-and-visibility.md): a hidden member and one with a
   * block either way answer exactly as the unknown id of `expect`.
   */
  otherMember?: (id: string) => { path?: string; body?: unknown };
}

/** Refused to every API key: keys are managed by a signed-in admin (docs/api/authentication.md). */
const SIGNED_IN_ONLY = 403;

const PARTNER_APPLICATION = {
  companyName: "Matrix Venues",
  contactName: "Mat Rix",
  contactEmail: "partners@matrix.example",
  description: "Rooftop venue for first dates.",
  businessType: "venue",
  country: "KE",
};

export const ROUTES: RouteCase[] = [
  { method: "GET", template: "/health", access: "public", expect: 200 },
  // The browsable API reference and its script (decisions.md: /docs is public).
  { method: "GET", template: "/docs", access: "public", expect: 200 },
  { method: "GET", template: REFERENCE_SCRIPT_PATH, access: "public", expect: 200 },
  { method: "GET", template: "/v1/auth/test", access: "user", expect: 200 },
  { method: "POST", template: "/api/v1/admin/api-keys", access: "admin", body: { name: "matrix" }, expect: 201, apiKey: SIGNED_IN_ONLY },
  { method: "GET", template: "/api/v1/admin/api-keys", access: "admin", expect: 200, apiKey: SIGNED_IN_ONLY },
  // 404: no key sample_keyId.
  { method: "DELETE", template: "/api/v1/admin/api-keys/{keyId}", access: "admin", expect: 404, apiKey: SIGNED_IN_ONLY },
  // Tested with its own token by the matrix's observability case; a bearer never passes.
  { method: "POST", template: "/api/v1/admin/observability/vms/{vmId}/heartbeat", access: "observability", body: { cpuPercent: 12 }, expect: 401 },
  { method: "GET", template: "/api/v1/admin/observability/vms", access: "admin", expect: 200 },
  // No tracker configured in the matrix: 200 {configured: false}.
  { method: "GET", template: "/api/v1/admin/observability/bugsink", access: "admin", expect: 200 },
  { method: "GET", template: "/api/v1/wallet/overview", access: "user", expect: 200 },
  // 404: no user usr_nobody.
  { method: "POST", template: "/api/v1/wallet/transfer", access: "user", body: { toUserId: "usr_nobody", amount: 1 }, expect: 404, otherMember: (id) => ({ body: { toUserId: id, amount: 1 } }) },
  // 404: no user usr_nobody.
  { method: "POST", template: "/api/v1/wallet/coins/award", access: "admin", body: { userId: "usr_nobody", amount: 1, reason: "matrix" }, expect: 404 },
  { method: "GET", template: "/api/v1/wallet/leaderboard", access: "user", expect: 200 },
  { method: "GET", template: "/api/v1/wallet/transactions", access: "user", expect: 200 },
  { method: "GET", template: "/api/v1/subscriptions/plans", access: "user", expect: 200 },
  { method: "GET", template: "/api/v1/subscriptions/current", access: "user", expect: 200 },
  // 422 insufficient_funds: a fresh wallet holds 0 coins.
  { method: "POST", template: "/api/v1/subscriptions", access: "user", body: { planId: "premium" }, expect: 422 },
  { method: "GET", template: "/api/v1/admin/coins/mint/state", access: "admin", expect: 200 },
  { method: "GET", template: "/api/admin/finance/metrics", access: "admin", expect: 200 },
  { method: "GET", template: "/api/v1/admin/audit", access: "admin", expect: 200 },
  { method: "GET", template: "/api/v1/admin/config/maps/regions", access: "admin", expect: 200 },
  // 428: the matrix sends no If-Match (docs/api/admin.md: the write must name the version it replaces).
  { method: "PUT", template: "/api/v1/admin/config/maps/regions", access: "admin", body: { enabled: ["DE"] }, expect: 428 },
  { method: "GET", template: "/api/v1/config/maps/regions", access: "user", expect: 200 },
  { method: "POST", template: "/api/v1/admin/vouchers", access: "admin", body: { coins: 5, count: 1 }, expect: 201 },
  { method: "GET", template: "/api/v1/admin/vouchers", access: "admin", expect: 200 },
  // 404: no batch with that (well-formed) id.
  { method: "POST", template: "/api/v1/admin/vouchers/batches/{batchId}/revoke", access: "admin", path: "/api/v1/admin/vouchers/batches/vbt_00000000000000000000000000/revoke", expect: 404 },
  // 404: no voucher with that (well-formed) id.
  { method: "POST", template: "/api/v1/admin/vouchers/{voucherId}/revoke", access: "admin", path: "/api/v1/admin/vouchers/vch_00000000000000000000000000/revoke", expect: 404 },
  // 404: no such code.
  { method: "POST", template: "/api/v1/vouchers/redeem", access: "user", body: { code: "0000-0000-0000-0000" }, expect: 404 },
  // 404: a fresh caller has no profile yet.
  { method: "GET", template: "/api/v1/profiles/discover", access: "user", expect: 404 },
  // 404: a fresh caller has no profile yet.
  { method: "GET", template: "/api/v1/profile", access: "user", expect: 404 },
  { method: "PUT", template: "/api/v1/profile", access: "user", body: { displayName: "Matrix", birthDate: "1990-01-01", gender: "other", interestedIn: ["woman"] }, expect: 201 },
  // 400: sample_userId is not a user id.
  { method: "GET", template: "/api/v1/profile/{userId}", access: "user", expect: 400, otherMember: (id) => ({ path: `/api/v1/profile/${id}` }) },
  // 404: no such user.
  { method: "POST", template: "/api/v1/blocks", access: "user", body: { userId: "usr_00000000000000000000000000" }, expect: 404 },
  { method: "GET", template: "/api/v1/blocks", access: "user", expect: 200 },
  // The caller's own account: deleted at once (docs/api/account.md); only the signed-in member may.
  { method: "DELETE", template: "/api/v1/account", access: "user", body: { confirm: "DELETE" }, expect: 200, apiKey: SIGNED_IN_ONLY },
  // 409: a fresh caller's account is not deleted.
  { method: "POST", template: "/api/v1/account/restore", access: "user", expect: 409, apiKey: SIGNED_IN_ONLY },
  // 400: sample_userId is not a user id.
  { method: "DELETE", template: "/api/v1/blocks/{userId}", access: "user", expect: 400 },
  // 404: no such user.
  { method: "POST", template: "/api/v1/reports", access: "user", body: { userId: "usr_00000000000000000000000000", reason: "spam" }, expect: 404 },
  // 404: no user usr_nobody.
  { method: "POST", template: "/api/matching/swipe", access: "user", body: { targetUserId: "usr_nobody", action: "like" }, expect: 404, otherMember: (id) => ({ body: { targetUserId: id, action: "like" } }) },
  // 404: no user usr_nobody.
  { method: "POST", template: "/api/v1/winks", access: "user", body: { toUserId: "usr_nobody" }, expect: 404, otherMember: (id) => ({ body: { toUserId: id } }) },
  { method: "GET", template: "/api/v1/winks/received", access: "user", expect: 200 },
  // 404: no wink sample_winkId.
  { method: "POST", template: "/api/v1/winks/{winkId}/accept", access: "user", expect: 404 },
  // 404: no wink sample_winkId.
  { method: "POST", template: "/api/v1/winks/{winkId}/decline", access: "user", expect: 404 },
  { method: "GET", template: "/api/v1/matches", access: "user", expect: 200 },
  // 400: a malformed Last-Event-ID answers at once; a valid call would hold the stream open.
  { method: "GET", template: "/api/v1/matches/events", access: "user", path: "/api/v1/matches/events?lastEventId=not-an-id", expect: 400 },
  // 404: no match sample_matchId.
  { method: "DELETE", template: "/api/v1/matches/{matchId}", access: "user", expect: 404 },
  { method: "POST", template: "/api/payments/card-a/checkout", access: "user", body: { amount: 500, currency: "USD" }, expect: 201 },
  { method: "POST", template: "/api/v1/payments/card-b/card-collection", access: "user", body: { amount: 10, phoneNumber: "+15550100", email: "matrix@example.test" }, expect: 201 },
  { method: "POST", template: "/api/payments/crypto/create", access: "user", body: { amount: 10, currency: "BTC" }, expect: 201 },
  { method: "POST", template: "/api/v1/mobile-money/stk-push", access: "user", body: { phoneNumber: "0712345678", amount: 100 }, expect: 201 },
  // 404: no payment sample_paymentId.
  { method: "GET", template: "/api/payments/{paymentId}/status", access: "user", expect: 404 },
  // Provider callbacks: no bearer token; each is verified by its own signature, hash or URL token
  // (401 without it, which is what the matrix sends).
  { method: "POST", template: "/api/payments/card-a/webhook", access: "webhook", body: {}, expect: 401 },
  { method: "POST", template: "/api/v1/payments/card-b/webhook", access: "webhook", body: {}, expect: 401 },
  { method: "POST", template: "/api/payments/crypto/ipn", access: "webhook", body: {}, expect: 401 },
  { method: "POST", template: "/api/v1/mobile-money/callback/{token}", access: "webhook", body: {}, expect: 401 },
  // The browser's return from card-b shows a state and changes nothing. 404: no transaction cbtx_matrix.
  { method: "GET", template: "/api/v1/payments/card-b/redirect", access: "public", path: "/api/v1/payments/card-b/redirect?tx_ref=cbtx_matrix", expect: 404 },
  { method: "GET", template: "/api/v1/kb", access: "user", expect: 200 },
  { method: "PUT", template: "/api/v1/kb", access: "admin", body: { content: "# Matrix\n\nA section." }, expect: 200 },
  { method: "GET", template: "/api/v1/kb/versions", access: "admin", expect: 200 },
  { method: "GET", template: "/api/v1/kb/assets", access: "user", expect: 200 },
  // 400: the URL points at a private address (the fetch guard refuses it).
  { method: "POST", template: "/api/v1/kb/assets", access: "admin", body: { url: "http://127.0.0.1/refused" }, expect: 400 },
  // 404: no asset sample_assetId.
  { method: "DELETE", template: "/api/v1/kb/assets/{assetId}", access: "admin", expect: 404 },
  { method: "GET", template: "/api/v1/messaging/workflows", access: "admin", expect: 200 },
  {
    method: "POST",
    template: "/api/v1/messaging/workflows",
    access: "admin",
    body: {
      name: "matrix",
      nodes: [
        { id: "t", type: "trigger", data: { event: "manual" } },
        { id: "m", type: "send_message", data: { channel: "push", template: "Hi {{displayName}}" } },
      ],
      edges: [{ id: "e", source: "t", target: "m" }],
    },
    expect: 201,
  },
  // 404: no workflow sample_workflowId.
  { method: "GET", template: "/api/v1/messaging/workflows/{workflowId}", access: "admin", expect: 404 },
  // 404: no workflow sample_workflowId.
  { method: "POST", template: "/api/v1/messaging/workflows/{workflowId}/sync", access: "admin", expect: 404 },
  // 404: no workflow sample_workflowId.
  { method: "POST", template: "/api/v1/messaging/workflows/{workflowId}/run", access: "admin", body: {}, expect: 404 },
  // 404: no workflow sample_workflowId.
  { method: "GET", template: "/api/v1/messaging/workflows/{workflowId}/runs", access: "admin", expect: 404 },
  // 401: the engine's callback is verified by the run's token or a body HMAC, never by a caller's credential.
  { method: "POST", template: "/api/v1/messaging/workflows/status", access: "webhook", body: {}, expect: 401 },
  { method: "POST", template: "/api/v1/ai-agents/support/chat", access: "ai", body: { message: "How do I buy coins?" }, expect: 200 },
  { method: "POST", template: "/api/v1/voice/agent", access: "ai", expect: 200 },
  { method: "POST", template: "/api/v1/voice/stt", access: "ai", expect: 200 },
  { method: "POST", template: "/api/v1/voice/tts", access: "ai", expect: 200 },
  // The agent is given the member's own token, never an admin's API key.
  { method: "POST", template: "/api/agent", access: "user", body: { message: "hello" }, expect: 200, apiKey: SIGNED_IN_ONLY },
  { method: "GET", template: "/api/v1/ai-agents/health", access: "public", expect: 200 },
  { method: "POST", template: "/api/v1/ai-agents/support-video/request", access: "ai", body: { reason: "The app crashes on start", platform: "web" }, expect: 201 },
  // 404: no user usr_nobody.
  { method: "POST", template: "/api/v1/ai-agents/chat/response", access: "ai", body: { message: "Hello there!", userId: "usr_nobody" }, expect: 404 },
  { method: "POST", template: "/api/v1/ai-agents/bio/rewrite", access: "ai", body: { currentBio: "I like long walks.", style: "casual" }, expect: 200 },
  { method: "POST", template: "/api/v1/ai-agents/bio/optimize", access: "ai", body: { currentBio: "I like long walks.", style: "casual" }, expect: 200 },
  {
    method: "POST",
    template: "/api/v1/ai-agents/match/predict",
    access: "ai",
    body: { user1Profile: "Loves hiking, coffee and jazz concerts.", user2Profile: "Jazz fan who hikes every weekend with coffee." },
    expect: 200,
  },
  { method: "POST", template: "/api/v1/ai-agents/experiences/pricing", access: "ai", body: { experienceType: "dinner", location: "Nairobi", duration: 120 }, expect: 200 },
  { method: "GET", template: "/api/v1/ai-agents/context/stats", access: "admin", expect: 200 },
  { method: "GET", template: "/api/v1/translations/{namespace}", access: "public", path: "/api/v1/translations/common?lang=en", expect: 200 },
  // 404: no namespace sample_namespace (the language is checked first, so fr).
  { method: "POST", template: "/api/v1/translations/message", access: "ai", body: { text: "Hola, ¿qué tal?", targetLanguage: "en", contextId: "matrix" }, expect: 200 },
  // The caller's own profile: a fresh caller has none, so the given fields.
  { method: "POST", template: "/api/v1/translations/profile", access: "ai", body: { targetLanguage: "fr", bio: "I like long walks." }, expect: 200 },
  { method: "POST", template: "/api/v1/translations/{namespace}/seed", access: "admin", path: "/api/v1/translations/common/seed", body: { targetLanguages: ["fr"] }, expect: 202 },
  // 404: a well-formed job id that names no job.
  { method: "GET", template: "/api/v1/translations/jobs/{jobId}", access: "admin", path: "/api/v1/translations/jobs/trj_00000000000000000000000000", expect: 404 },
  { method: "PUT", template: "/api/v1/admin/translations/{namespace}/{lang}", access: "admin", path: "/api/v1/admin/translations/sample_namespace/fr", body: {}, expect: 404 },
  { method: "POST", template: "/api/v1/ai-agents/context/invalidate/{userId}", access: "admin", expect: 200 },
  { method: "POST", template: "/api/v1/partners/apply", access: "user", body: PARTNER_APPLICATION, expect: 201 },
  // 404: a fresh caller has not applied as a partner.
  { method: "GET", template: "/api/v1/partner/profile", access: "user", expect: 404 },
  // 404: a fresh caller has not applied as a partner.
  { method: "PUT", template: "/api/v1/partner/profile", access: "user", body: { companyName: "Matrix Venues" }, expect: 404 },
  // 404: a fresh caller has not applied as a partner.
  { method: "POST", template: "/api/v1/partner/webhook/rotate-secret", access: "user", expect: 404 },
  // 404: a fresh caller has not applied as a partner.
  { method: "POST", template: "/api/v1/partner/webhook/test", access: "user", expect: 404 },
  // 404: a fresh caller has not applied as a partner.
  { method: "GET", template: "/api/v1/partner/deliveries", access: "user", expect: 404 },
  // 404: a fresh caller has not applied as a partner (and has no such delivery).
  { method: "POST", template: "/api/v1/partner/deliveries/{deliveryId}/replay", access: "user", path: "/api/v1/partner/deliveries/msg_00000000000000000000000000/replay", expect: 404 },
  { method: "GET", template: "/api/v1/admin/partners", access: "admin", expect: 200 },
  { method: "GET", template: "/api/v1/admin/messaging/observability", access: "admin", path: "/api/v1/admin/messaging/observability?window=1h", expect: 200 },
  // 404: no partner ptn_000….
  { method: "POST", template: "/api/v1/admin/partners/{partnerId}/approve", access: "admin", path: "/api/v1/admin/partners/ptn_00000000000000000000000000/approve", expect: 404 },
  // 404: no partner ptn_000….
  { method: "POST", template: "/api/v1/admin/partners/{partnerId}/reject", access: "admin", path: "/api/v1/admin/partners/ptn_00000000000000000000000000/reject", body: { reason: "matrix" }, expect: 404 },
  { method: "GET", template: "/api/v1/admin/support/tickets", access: "admin", expect: 200 },
  // 404: no ticket tkt_000….
  { method: "POST", template: "/api/v1/admin/support/tickets/{ticketId}/resolve", access: "admin", path: "/api/v1/admin/support/tickets/tkt_00000000000000000000000000/resolve", body: { note: "matrix" }, expect: 404 },
  { method: "GET", template: "/api/v1/admin/support/stats", access: "admin", expect: 200 },
  // Exports take the member's own token: an API key gets 403 (docs/api/account.md).
  { method: "POST", template: "/api/v1/account/export", access: "user", expect: 202, apiKey: 403 },
  // 404: a well-formed export id that names no export of the caller's.
  { method: "GET", template: "/api/v1/account/exports/{exportId}", access: "user", path: "/api/v1/account/exports/exp_00000000000000000000000000", expect: 404, apiKey: 403 },
  // 404: no such export; the token (not a bearer) is the credential, so any caller gets the same.
  { method: "GET", template: "/api/v1/account/exports/{exportId}/download", access: "public", path: `/api/v1/account/exports/exp_00000000000000000000000000/download?token=${"0".repeat(64)}`, expect: 404 },
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
