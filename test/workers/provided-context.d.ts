// What the workerd project's global setup (Node) hands its tests (workerd) through provide/inject.
// Its own file, so that both the Node-typed global setup and the Workers-typed tests see it.
import "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    workersDatabaseUrl: string;
    neonWsProxyPort: number;
    inferenceUrl: string;
    voiceRuntimeUrl: string;
    voiceRuntimeSecret: string;
    /** The edge-flow tests' identity provider and its signing key (a private JWK: they sign in workerd). */
    issuerUrl: string;
    issuerAudience: string;
    issuerSigningJwk: string;
    /** Upstash's REST protocol in front of the local Redis. */
    upstashUrl: string;
    upstashToken: string;
    /** The card-a provider fake's settings (CARD_A_* variables), as JSON. */
    cardAEnv: string;
    /** A loopback partner endpoint (test/support/webhook-receiver.ts), without a trailing slash. */
    webhookReceiverUrl: string;
  }
}
