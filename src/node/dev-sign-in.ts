import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { Config } from "../config";
import { assertDevIssuerAllowed, devAudience, loadOrCreateKey } from "./dev-issuer";

/**
 * Sign-in for a newcomer's web app without an identity provider: `oidc-provider` (a development
 * dependency, loaded only here) on the loopback port after the web app's, with its development
 * login form (any name signs in as that member id; the password is not checked). Its access tokens are
 * JWTs for the API's audience signed with the development issuer's key, so the API trusts them as
 * it trusts `npm run token`. Never in production (assertDevIssuerAllowed).
 */
export const DEV_WEB_CLIENT_ID = "web-dev";

/** Where the development sign-in answers: PORT + 2 (the API at PORT, the web app at PORT + 1 by default). */
export function devSignInIssuer(config: Config): string {
  const host = config.HOST === "0.0.0.0" || config.HOST === "::" ? "127.0.0.1" : config.HOST;
  return `http://${host.includes(":") ? `[${host}]` : host}:${config.PORT + 2}`;
}

interface ProviderInstance {
  callback(): (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => void;
}
type ProviderConstructor = new (issuer: string, configuration: Record<string, unknown>) => ProviderInstance;

export async function startDevSignIn(config: Config, webOrigin: string): Promise<{ issuer: string; close(): Promise<void> }> {
  assertDevIssuerAllowed(config);
  const specifier: string = "oidc-provider";
  let Provider: ProviderConstructor;
  try {
    Provider = ((await import(specifier)) as { default: ProviderConstructor }).default;
  } catch {
    throw new Error("the development sign-in needs the development dependencies (npm install); or set OIDC_ISSUER and OIDC_CLIENT_ID");
  }
  const key = await loadOrCreateKey(config);
  const issuer = devSignInIssuer(config);
  const audience = devAudience(config);
  const claimsOf = (id: string): Record<string, unknown> => {
    const claims: Record<string, unknown> = { email: `${id}@dev.local` };
    // The roles claim may be dotted ("realm_access.roles"): build the nesting it names.
    const path = config.OIDC_ROLES_CLAIM.split(".");
    let target = claims;
    for (const part of path.slice(0, -1)) target = (target[part] = {}) as Record<string, unknown>;
    target[path[path.length - 1] as string] = [];
    return claims;
  };
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: DEV_WEB_CLIENT_ID,
        token_endpoint_auth_method: "none",
        application_type: "web",
        redirect_uris: [`${webOrigin}/api/auth/callback`],
        post_logout_redirect_uris: [`${webOrigin}/`],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        // The development key is an ES256 key; the provider's default is RS256.
        id_token_signed_response_alg: "ES256",
      },
    ],
    issueRefreshToken: async () => true,
    pkce: { required: () => true },
    jwks: { keys: [key.privateJwk] },
    cookies: { keys: [randomBytes(32).toString("hex")] },
    claims: { openid: ["sub"], email: ["email", "email_verified"] },
    findAccount: async (_ctx: unknown, id: string) => ({ accountId: id, claims: async () => ({ sub: id, email: `${id}@dev.local`, email_verified: true }) }),
    extraTokenClaims: async (_ctx: unknown, token: { kind: string; accountId?: string }) => (token.kind === "AccessToken" && token.accountId ? claimsOf(token.accountId) : undefined),
    features: {
      devInteractions: { enabled: true },
      revocation: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // A resource indicator must be an absolute URI; the token's audience is the API's own.
        defaultResource: () => (/^[a-z][a-z0-9+.-]*:/i.test(audience) ? audience : `urn:platform:${audience}`),
        // The code carries the defaulted resource; the token endpoint uses it too, so `openid`
        // gets a JWT for the API rather than an opaque token for the userinfo endpoint.
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: "openid", audience, accessTokenFormat: "jwt", jwt: { sign: { alg: "ES256" } } }),
      },
    },
  });
  const server = createServer(provider.callback());
  const url = new URL(issuer);
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) => reject(new Error(`the development sign-in cannot listen on ${url.host}: ${err.code ?? err.message}`)));
    server.listen(Number(url.port), url.hostname.replace(/^\[|\]$/g, ""), () => resolve());
  });
  return {
    issuer,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
