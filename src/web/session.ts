import { ApiError } from "../errors";
import type { Clock } from "../platform/clock";
import type { Logger } from "../platform/logger";
import { cookieHeader, clearCookieHeader, seal, unseal, type CookieKeys, type CookieSettings } from "./cookies";
import { IssuerUnreachable, type OidcClient, type TokenSet } from "./oidc";

/**
 * The member's session, kept only in two encrypted cookies: the session cookie holds the access
 * token until it expires, the refresh cookie the refresh token and the ID token (for logout).
 * Nothing about a session is stored server-side; what this object keeps per app instance is the
 * refreshes in flight and their recent outcomes, so that one browser's concurrent calls refresh
 * once and a call still carrying the old cookie gets the new tokens rather than spending the
 * rotated refresh token again (which issuers treat as theft and answer by revoking the grant).
 */
export interface SessionCookies {
  session?: string;
  refresh?: string;
}

export interface Bearer {
  token: string;
  /** Set-Cookie values the answer must carry (a refresh happened). */
  setCookies: string[];
}

interface SessionPayload extends Record<string, unknown> {
  at: string;
  exp_at: number;
}
interface RefreshPayload extends Record<string, unknown> {
  rt?: string;
  idt?: string;
}

/** An access token this close to its expiry is refreshed before it is forwarded. */
export const REFRESH_MARGIN_MS = 5_000;
/** How long a refresh's outcome answers calls that still carry the refresh token it replaced. */
const RECENT_MS = 30_000;
const RECENT_MAX = 10_000;

export interface SessionStore {
  /** Set-Cookie values for a fresh sign-in or refresh. */
  cookiesFor(tokens: TokenSet, previousIdToken?: string): Promise<string[]>;
  /** The access token to forward, refreshed first when it has expired; 401 when there is none. */
  bearer(cookies: SessionCookies, requestId: string): Promise<Bearer>;
  /** What logout needs: the refresh and ID tokens, when the refresh cookie opens. */
  refreshOf(cookies: SessionCookies): Promise<RefreshPayload | undefined>;
  /** Whether the cookies hold a session at all (for the page). */
  isSignedIn(cookies: SessionCookies): Promise<boolean>;
  clear(): string[];
}

export function createSessionStore(deps: { keys: CookieKeys; settings: CookieSettings; oidc: OidcClient; clock: Clock; logger: Logger; maxAgeSeconds: number }): SessionStore {
  const { keys, settings, oidc, clock, logger } = deps;
  const inFlight = new Map<string, Promise<TokenSet>>();
  const recent = new Map<string, { tokens: TokenSet; until: number }>();

  const remember = (refreshToken: string, tokens: TokenSet) => {
    const now = clock.now();
    if (recent.size >= RECENT_MAX) {
      for (const [key, entry] of recent) if (entry.until <= now) recent.delete(key);
      if (recent.size >= RECENT_MAX) recent.delete(recent.keys().next().value as string);
    }
    recent.set(refreshToken, { tokens, until: now + RECENT_MS });
  };

  const refreshOnce = (refreshToken: string): Promise<TokenSet> => {
    const done = recent.get(refreshToken);
    if (done && done.until > clock.now()) return Promise.resolve(done.tokens);
    let running = inFlight.get(refreshToken);
    if (!running) {
      running = oidc.refresh(refreshToken).then(
        (tokens) => {
          remember(refreshToken, tokens);
          return tokens;
        },
      ).finally(() => inFlight.delete(refreshToken));
      inFlight.set(refreshToken, running);
    }
    return running;
  };

  const store: SessionStore = {
    async cookiesFor(tokens, previousIdToken) {
      const now = clock.now();
      const lifetime = Math.max(1, Math.floor((tokens.expiresAt - now) / 1000));
      const session = await seal(keys.session, { at: tokens.accessToken, exp_at: tokens.expiresAt }, now, lifetime);
      const refresh = await seal(keys.refresh, { rt: tokens.refreshToken, idt: tokens.idToken ?? previousIdToken }, now, deps.maxAgeSeconds);
      return [cookieHeader(settings, "session", session, lifetime), cookieHeader(settings, "refresh", refresh, deps.maxAgeSeconds)];
    },
    async bearer(cookies, requestId) {
      const now = clock.now();
      const session = await unseal<SessionPayload & { exp: number }>(keys.session, cookies.session, now);
      if (session && typeof session.at === "string" && session.exp_at - REFRESH_MARGIN_MS > now) return { token: session.at, setCookies: [] };
      const refresh = await store.refreshOf(cookies);
      if (!refresh?.rt) throw new ApiError("unauthorized", "sign in first");
      let tokens: TokenSet;
      try {
        tokens = await refreshOnce(refresh.rt);
      } catch (err) {
        if (err instanceof IssuerUnreachable) {
          logger.error("identity provider unavailable during refresh", { requestId, reason: err.message });
          throw new ApiError("service_unavailable", "the identity provider cannot be reached; retry shortly");
        }
        logger.info("session refresh refused", { requestId, reason: err instanceof Error ? err.message : String(err) });
        throw new ApiError("unauthorized", "the session has ended; sign in again");
      }
      return { token: tokens.accessToken, setCookies: await store.cookiesFor(tokens, refresh.idt) };
    },
    async refreshOf(cookies) {
      const payload = await unseal<RefreshPayload>(keys.refresh, cookies.refresh, clock.now());
      if (!payload) return undefined;
      return { rt: typeof payload.rt === "string" ? payload.rt : undefined, idt: typeof payload.idt === "string" ? payload.idt : undefined };
    },
    async isSignedIn(cookies) {
      const now = clock.now();
      if (await unseal(keys.session, cookies.session, now)) return true;
      return (await store.refreshOf(cookies))?.rt !== undefined;
    },
    clear() {
      return [clearCookieHeader(settings, "session"), clearCookieHeader(settings, "refresh")];
    },
  };
  return store;
}
