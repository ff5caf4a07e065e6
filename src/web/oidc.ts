import * as client from "openid-client";
import type { WebConfig } from "./config";
import { isLoopbackHttp } from "./config";

/**
 * The web app's side of OpenID Connect, through `openid-client` (Web APIs only, so the same on
 * Workers and Node): discovery once per app instance, the authorization code grant with PKCE,
 * state and nonce, refresh, revocation and RP-initiated logout.
 */
export interface TokenSet {
  accessToken: string;
  /** When the access token expires, ms since the epoch. */
  expiresAt: number;
  refreshToken?: string;
  idToken?: string;
}

export interface SignInRequest {
  url: URL;
  codeVerifier: string;
  state: string;
  nonce: string;
}

/** The issuer could not be reached or answered nonsense: a 503, not the member's fault. */
export class IssuerUnreachable extends Error {}
/** The issuer or our own checks refused: a 400 at the callback, a 401 on refresh. */
export class SignInRefused extends Error {}

export interface OidcClient {
  redirectUri: string;
  startSignIn(): Promise<SignInRequest>;
  finishSignIn(callbackUrl: URL, checks: { codeVerifier: string; state: string; nonce: string }): Promise<TokenSet>;
  refresh(refreshToken: string): Promise<TokenSet>;
  /** Revokes where the issuer has a revocation endpoint; failures are the caller's to log. */
  revoke(refreshToken: string): Promise<boolean>;
  /** The issuer's end_session_endpoint with our hints, or undefined when it has none. */
  endSessionUrl(idToken: string | undefined): Promise<URL | undefined>;
  /** The issuer's origins a form may be sent on to (for the page's CSP). */
  issuerOrigins(): string[];
}

export function createOidcClient(config: WebConfig, deps: { fetch: typeof fetch; now: () => number }): OidcClient {
  const redirectUri = `${config.WEB_ORIGIN}/api/auth/callback`;
  let discovered: Promise<client.Configuration> | undefined;
  let known: client.Configuration | undefined;

  const configuration = (): Promise<client.Configuration> => {
    discovered ??= client
      .discovery(
        new URL(config.OIDC_ISSUER),
        config.OIDC_CLIENT_ID,
        config.OIDC_CLIENT_SECRET ? { client_secret: config.OIDC_CLIENT_SECRET } : undefined,
        config.OIDC_CLIENT_SECRET ? client.ClientSecretPost(config.OIDC_CLIENT_SECRET) : client.None(),
        {
          // Plain http is accepted for a loopback issuer only (config refuses it elsewhere in production).
          execute: isLoopbackHttp(config.OIDC_ISSUER) || config.NODE_ENV !== "production" ? [client.allowInsecureRequests] : [],
          [client.customFetch]: (url, options) => deps.fetch(url, options as RequestInit),
          timeout: 10,
        },
      )
      .then((c) => {
        known = c;
        return c;
      })
      .catch((err: unknown) => {
        // Not cached: the next request tries again.
        discovered = undefined;
        throw new IssuerUnreachable(`discovery failed: ${describe(err)}`);
      });
    return discovered;
  };

  const tokenSet = (t: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers, previous?: string): TokenSet => {
    const expiresIn = t.expiresIn();
    return {
      accessToken: t.access_token,
      // Without expires_in the token is tried for five minutes, then refreshed.
      expiresAt: deps.now() + (expiresIn ?? 300) * 1000,
      refreshToken: t.refresh_token ?? previous,
      idToken: t.id_token,
    };
  };

  return {
    redirectUri,
    async startSignIn() {
      const c = await configuration();
      const codeVerifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = client.randomNonce();
      const url = client.buildAuthorizationUrl(c, {
        redirect_uri: redirectUri,
        scope: config.OIDC_SCOPES,
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: "S256",
        state,
        nonce,
      });
      return { url, codeVerifier, state, nonce };
    },
    async finishSignIn(callbackUrl, checks) {
      const c = await configuration();
      try {
        const tokens = await client.authorizationCodeGrant(c, callbackUrl, {
          pkceCodeVerifier: checks.codeVerifier,
          expectedState: checks.state,
          expectedNonce: checks.nonce,
          idTokenExpected: true,
        });
        return tokenSet(tokens);
      } catch (err) {
        throw classify(err);
      }
    },
    async refresh(refreshToken) {
      const c = await configuration();
      try {
        return tokenSet(await client.refreshTokenGrant(c, refreshToken), refreshToken);
      } catch (err) {
        throw classify(err);
      }
    },
    async revoke(refreshToken) {
      const c = await configuration();
      if (!c.serverMetadata().revocation_endpoint) return false;
      await client.tokenRevocation(c, refreshToken, { token_type_hint: "refresh_token" });
      return true;
    },
    async endSessionUrl(idToken) {
      const c = await configuration();
      if (!c.serverMetadata().end_session_endpoint) return undefined;
      return client.buildEndSessionUrl(c, {
        post_logout_redirect_uri: `${config.WEB_ORIGIN}/`,
        ...(idToken ? { id_token_hint: idToken } : { client_id: config.OIDC_CLIENT_ID }),
      });
    },
    issuerOrigins() {
      const origins = new Set([new URL(config.OIDC_ISSUER).origin]);
      const end = known?.serverMetadata().end_session_endpoint;
      if (end) origins.add(new URL(end).origin);
      return [...origins];
    },
  };
}

/** The issuer's refusals (and failed checks of its answers) versus the issuer being unreachable. */
function classify(err: unknown): Error {
  if (err instanceof client.ResponseBodyError || err instanceof client.AuthorizationResponseError) return new SignInRefused(`${err.error}: ${err.error_description ?? ""}`);
  if (err instanceof client.ClientError) {
    // Network failures surface as the fetch's own TypeError, maybe wrapped.
    const cause = (err as { cause?: unknown }).cause;
    if (cause instanceof TypeError || (err as { code?: string }).code === "OAUTH_TIMEOUT") return new IssuerUnreachable(describe(err));
    return new SignInRefused(describe(err));
  }
  if (err instanceof TypeError || (err instanceof DOMException && (err.name === "TimeoutError" || err.name === "AbortError"))) return new IssuerUnreachable(describe(err));
  return new SignInRefused(describe(err));
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error ? `${err.message}: ${cause.message}` : err.message;
}
