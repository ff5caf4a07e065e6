import type { Config } from "../../config";
import { ApiError } from "../../errors";
import type { Provider } from "./context";

export interface CardAConfig {
  url: string;
  apiKey: string;
  storeId: string;
  variantId: string;
  webhookSecret: string;
  currency: string;
}
export interface CardBConfig {
  url: string;
  secretKey: string;
  webhookSecret: string;
}
export interface CryptoConfig {
  url: string;
  apiKey: string;
  ipnSecret: string;
}
export interface MobileMoneyConfig {
  url: string;
  consumerKey: string;
  consumerSecret: string;
  shortcode: string;
  passkey: string;
  callbackUrl: string;
}

function unavailable(provider: Provider): never {
  throw new ApiError("service_unavailable", `${provider} payments are not configured`);
}

const trim = (url: string) => url.replace(/\/+$/, "");

/** Each provider needs all of its settings; without them its routes answer 503 naming it. */
export function cardAConfig(c: Config): CardAConfig {
  const { CARD_A_API_URL: url, CARD_A_API_KEY: apiKey, CARD_A_STORE_ID: storeId, CARD_A_VARIANT_ID: variantId, CARD_A_WEBHOOK_SECRET: webhookSecret } = c;
  if (!url || !apiKey || !storeId || !variantId || !webhookSecret) unavailable("card-a");
  return { url: trim(url), apiKey, storeId, variantId, webhookSecret, currency: c.CARD_A_CURRENCY };
}

export function cardBConfig(c: Config): CardBConfig {
  const { CARD_B_API_URL: url, CARD_B_SECRET_KEY: secretKey, CARD_B_WEBHOOK_SECRET: webhookSecret } = c;
  if (!url || !secretKey || !webhookSecret) unavailable("card-b");
  return { url: trim(url), secretKey, webhookSecret };
}

export function cryptoConfig(c: Config): CryptoConfig {
  const { CRYPTO_API_URL: url, CRYPTO_API_KEY: apiKey, CRYPTO_IPN_SECRET: ipnSecret } = c;
  if (!url || !apiKey || !ipnSecret) unavailable("crypto");
  return { url: trim(url), apiKey, ipnSecret };
}

export function mobileMoneyConfig(c: Config): MobileMoneyConfig {
  const {
    MOBILE_MONEY_API_URL: url,
    MOBILE_MONEY_CONSUMER_KEY: consumerKey,
    MOBILE_MONEY_CONSUMER_SECRET: consumerSecret,
    MOBILE_MONEY_SHORTCODE: shortcode,
    MOBILE_MONEY_PASSKEY: passkey,
    MOBILE_MONEY_CALLBACK_URL: callbackUrl,
  } = c;
  if (!url || !consumerKey || !consumerSecret || !shortcode || !passkey || !callbackUrl) unavailable("mobile-money");
  return { url: trim(url), consumerKey, consumerSecret, shortcode, passkey, callbackUrl: trim(callbackUrl) };
}

/** For reconciliation: a provider without settings is skipped rather than failing the run. */
export function configured<T>(read: (c: Config) => T, config: Config): T | null {
  try {
    return read(config);
  } catch {
    return null;
  }
}
