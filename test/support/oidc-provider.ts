import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import { followAuthorization } from "./oidc-interactions";

export { followAuthorization };

/**
 * A real OpenID Connect provider (panva's `oidc-provider`, in-memory adapter, development
 * interactions) on a loopback port, for end-to-end tests of the Authorization Code + PKCE flow.
 * `login()` plays the browser with fetch: it follows the redirects by hand, keeps the cookies,
 * submits the login and consent forms, reads `code` from the redirect to the client and redeems
 * it at the token endpoint with the PKCE verifier.
 */
export interface OidcProviderHandle {
  issuer: string;
  clientId: string;
  login(accountId: string, opts?: { email?: string; roles?: string[] }): Promise<string>;
  /**
   * Plays the browser from an authorization URL (one a relying party built) through the login and
   * consent forms, and returns the URL the issuer finally sends the browser to (the client's
   * redirect URI with `code` and `state`, or with `error`).
   */
  authorize(authorizationUrl: string, accountId: string, opts?: { email?: string; roles?: string[] }): Promise<URL>;
  /** Registers an account's claims ahead of an interactive (browser) login. */
  setAccount(accountId: string, opts: { email?: string; roles?: string[] }): void;
  /** Ids (`jti`) of the refresh tokens revoked, newest last. */
  revoked: string[];
  close(): Promise<void>;
}

/** A web app's registration: a public or confidential client with refresh tokens and logout. */
export interface WebClientOptions {
  clientId: string;
  clientSecret?: string;
  redirectUri: string;
  postLogoutRedirectUri: string;
}

// oidc-provider ships no types (and @types/oidc-provider stops at 9.12): the narrow surface used here.
interface ProviderAccount {
  accountId: string;
  claims(use: string, scope: string): Promise<Record<string, unknown>>;
}
interface ProviderInstance {
  issuer: string;
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  on(event: string, listener: (...args: unknown[]) => void): void;
}
type ProviderConstructor = new (issuer: string, configuration: Record<string, unknown>) => ProviderInstance;

const CLIENT_ID = "e2e-public-client";
// A loopback address nothing listens on: the code is read from the Location header, never fetched.
const REDIRECT_URI = "http://127.0.0.1:9/callback";

async function loadProvider(): Promise<ProviderConstructor> {
  // A non-literal specifier keeps TypeScript from looking for declarations the package lacks.
  const specifier: string = "oidc-provider";
  const mod = (await import(specifier)) as { default: ProviderConstructor };
  return mod.default;
}

const base64url = (buf: Buffer) => buf.toString("base64url");

export async function startOidcProvider(options: { audience: string; webClient?: WebClientOptions; accessTokenTtlSeconds?: number; port?: number }): Promise<OidcProviderHandle> {
  const { audience, webClient } = options;
  const revoked: string[] = [];
  const Provider = await loadProvider();
  const accounts = new Map<string, { email: string; roles: string[] }>();
  const accountOf = (id: string) => accounts.get(id) ?? { email: `${id}@example.test`, roles: [] };
  const serverErrors: unknown[] = [];

  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: `e2e-rs256-${randomBytes(4).toString("hex")}`, alg: "RS256", use: "sig" };

  const server = createServer();
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        application_type: "web",
        token_endpoint_auth_method: "none",
        redirect_uris: [REDIRECT_URI],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
      ...(webClient
        ? [
            {
              client_id: webClient.clientId,
              ...(webClient.clientSecret ? { client_secret: webClient.clientSecret, token_endpoint_auth_method: "client_secret_post" } : { token_endpoint_auth_method: "none" }),
              application_type: "web",
              redirect_uris: [webClient.redirectUri],
              post_logout_redirect_uris: [webClient.postLogoutRedirectUri],
              grant_types: ["authorization_code", "refresh_token"],
              response_types: ["code"],
            },
          ]
        : []),
    ],
    // Refresh tokens for every client allowed the grant, as most issuers do (no offline_access dance).
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed("refresh_token"),
    pkce: { required: () => true },
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString("hex")] },
    claims: { openid: ["sub"], email: ["email", "email_verified"], roles: ["roles"] },
    findAccount: async (_ctx: unknown, id: string): Promise<ProviderAccount> => ({
      accountId: id,
      claims: async () => {
        const { email, roles } = accountOf(id);
        return { sub: id, email, email_verified: true, roles };
      },
    }),
    // What a resource server needs in the access token itself: the email and the roles array.
    extraTokenClaims: async (_ctx: unknown, token: { kind: string; accountId?: string }) => {
      if (token.kind !== "AccessToken" || !token.accountId) return undefined;
      const { email, roles } = accountOf(token.accountId);
      return { email, roles };
    },
    features: {
      devInteractions: { enabled: true },
      revocation: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        // The code carries the defaulted resource; use it at the token endpoint too, otherwise an
        // `openid` request would get an opaque token meant for the userinfo endpoint.
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: "openid", audience, accessTokenFormat: "jwt", jwt: { sign: { alg: "RS256" } } }),
      },
    },
    ttl: { AccessToken: options.accessTokenTtlSeconds ?? 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
  });
  provider.on("server_error", (_ctx, err) => serverErrors.push(err));
  provider.on("refresh_token.destroyed", (token) => revoked.push(String((token as { jti?: string }).jti)));
  server.on("request", provider.callback());

  async function discover(): Promise<{ authorization_endpoint: string; token_endpoint: string }> {
    const res = await fetch(`${issuer}/.well-known/openid-configuration`);
    if (!res.ok) throw new Error(`discovery answered ${res.status}`);
    return (await res.json()) as { authorization_endpoint: string; token_endpoint: string };
  }

  async function login(accountId: string, opts: { email?: string; roles?: string[] } = {}): Promise<string> {
    accounts.set(accountId, { email: opts.email ?? `${accountId}@example.test`, roles: opts.roles ?? [] });
    const { authorization_endpoint, token_endpoint } = await discover();
    const verifier = base64url(randomBytes(32));
    const challenge = base64url(createHash("sha256").update(verifier).digest());
    const state = base64url(randomBytes(12));

    const authUrl = new URL(authorization_endpoint);
    for (const [k, v] of Object.entries({
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      response_type: "code",
      scope: "openid email",
      state,
      nonce: base64url(randomBytes(12)),
      code_challenge: challenge,
      code_challenge_method: "S256",
    })) {
      authUrl.searchParams.set(k, v);
    }

    const landed = await authorize(authUrl.href, accountId, opts, REDIRECT_URI);
    const error = landed.searchParams.get("error");
    if (error) throw new Error(`authorization failed: ${error}: ${landed.searchParams.get("error_description") ?? ""}`);
    if (landed.searchParams.get("state") !== state) throw new Error("state mismatch on the callback");
    const code = landed.searchParams.get("code") ?? undefined;
    if (!code) throw new Error("the authorization flow did not reach the callback");

    const tokenRes = await fetch(token_endpoint, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, code_verifier: verifier, client_id: CLIENT_ID }).toString(),
    });
    const body = (await tokenRes.json()) as { access_token?: string; token_type?: string; error?: string; error_description?: string };
    if (!tokenRes.ok || !body.access_token) throw new Error(`token endpoint answered ${tokenRes.status}: ${body.error ?? ""} ${body.error_description ?? ""}`);
    return body.access_token;
  }

  async function authorize(authorizationUrl: string, accountId: string, opts: { email?: string; roles?: string[] } = {}, redirectUri = webClient?.redirectUri ?? REDIRECT_URI): Promise<URL> {
    if (!accounts.has(accountId) || opts.email || opts.roles) accounts.set(accountId, { email: opts.email ?? `${accountId}@example.test`, roles: opts.roles ?? [] });
    return followAuthorization(authorizationUrl, accountId, redirectUri, () => serverErrors.map(String).join("; "));
  }

  return {
    issuer: provider.issuer,
    clientId: CLIENT_ID,
    login,
    authorize: (url, accountId, opts) => authorize(url, accountId, opts),
    setAccount: (accountId, opts) => accounts.set(accountId, { email: opts.email ?? `${accountId}@example.test`, roles: opts.roles ?? [] }),
    revoked,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
