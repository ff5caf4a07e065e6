import type { Config } from "../../config";
import type { CompileOptions } from "./compile";

export function compileOptionsFrom(config: Config): CompileOptions {
  return {
    gatewayUrl: config.MESSAGING_GATEWAY_URL,
    gatewayCredential: config.N8N_GATEWAY_CREDENTIAL,
    smtpCredential: config.N8N_SMTP_CREDENTIAL,
    emailFrom: config.MESSAGING_EMAIL_FROM,
  };
}
