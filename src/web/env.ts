import type { WebDeps } from "./deps";
import type { OidcClient } from "./oidc";
import type { SessionStore } from "./session";

export interface WebVariables {
  deps: WebDeps;
  oidc: OidcClient;
  sessions: SessionStore;
  requestId: string;
  nonce: string;
}

export interface WebEnv {
  Variables: WebVariables;
}
