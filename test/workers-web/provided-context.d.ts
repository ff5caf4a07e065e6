// What this project's global setup (Node) hands the vitest config and the tests (workerd).
import "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    /** A fresh, migrated database, reached by the API Worker through the Neon WebSocket proxy. */
    webDatabaseUrl: string;
    webNeonWsProxyPort: number;
    /** oidc-provider on loopback http, with the web Worker registered as a public client. */
    webIssuerUrl: string;
    webApiAudience: string;
    webClientId: string;
    /** Where browsers reach the web Worker (its redirect URI and same-origin checks derive from it). */
    webOrigin: string;
    /** The API Worker as `wrangler deploy --dry-run` bundles it: a folder of modules. */
    webApiBundleDir: string;
  }
}
