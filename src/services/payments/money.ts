import type { Config } from "../../config";
import { ApiError } from "../../errors";

const CURRENCY = /^[A-Z]{3,5}$/;

/** US dollars per unit of each currency, from PAYMENT_FX_RATES (parsed with the config); USD is 1. */
export function fxRates(config: Config): Map<string, number> {
  return new Map<string, number>([["USD", 1], ...Object.entries(config.PAYMENT_FX_RATES)]);
}

const invalid = (path: string, message: string) => new ApiError("invalid_input", message, { details: [{ path, message }] });

/**
 * Coins for an amount in a currency's major units: 1 coin = 1 US cent, other currencies at the
 * configured rate, rounded down so a payment never credits more than it is worth.
 */
export function coinsFor(config: Config, majorAmount: number, currency: string, path = "amount"): number {
  const rate = fxRates(config).get(currency);
  if (rate === undefined) throw invalid("currency", `currency ${currency} is not accepted`);
  // Round the cents first so 19.99 × 100 does not become 1998.9999….
  const cents = Math.round(majorAmount * rate * 100 * 1e6) / 1e6;
  const coins = Math.floor(cents);
  checkCoins(config, coins, path);
  return coins;
}

/** Every payment is worth more than 50 coins (the card checkout's floor) and at most the configured cap. */
export function checkCoins(config: Config, coins: number, path = "amount"): void {
  if (coins <= 50) throw invalid(path, "amount must be worth more than 50 cents");
  if (coins > config.PAYMENT_MAX_COINS) throw invalid(path, `amount must be worth at most ${config.PAYMENT_MAX_COINS} cents`);
}

export function normaliseCurrency(raw: string | undefined, fallback: string): string {
  const code = (raw ?? fallback).trim().toUpperCase();
  if (!CURRENCY.test(code)) throw invalid("currency", "currency must be an ISO 4217 code");
  return code;
}
