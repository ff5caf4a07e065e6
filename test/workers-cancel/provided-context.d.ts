// What this project's global setup adds to the workerd project's (../workers/provided-context.d.ts).
import "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    slowIssuerUrl: string;
    slowWsProxyPort: number;
    slowInferenceUrl: string;
  }
}
