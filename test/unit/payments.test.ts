import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config";
import { coinsFor, fxRates } from "../../src/services/payments/money";
import { normalisePhone, providerTimestamp, stkPassword } from "../../src/services/payments/mobile-money";
import { hmacSha256Hex, hmacSha512Hex, signatureMatches, sortKeysDeep } from "../../src/services/payments/signatures";

const config = (env: Record<string, string> = {}) => parseConfig({ NODE_ENV: "test", ...env });

describe("payment money rules", () => {
  it("credits 1 coin per US cent and converts other currencies at the configured rate, rounding down", () => {
    const c = config({ PAYMENT_FX_RATES: "KES=0.0077, eur = 1.08" });
    expect([...fxRates(c).keys()].sort()).toEqual(["EUR", "KES", "USD"]);
    expect(coinsFor(c, 19.99, "USD")).toBe(1999);
    expect(coinsFor(c, 0.51, "USD")).toBe(51);
    expect(coinsFor(c, 1000, "KES")).toBe(770);
    expect(coinsFor(c, 10.01, "EUR")).toBe(1081);
    expect(() => coinsFor(c, 0.5, "USD")).toThrow(/more than 50/);
    expect(() => coinsFor(c, 10, "NGN")).toThrow(/not accepted/);
    expect(() => coinsFor(c, 10_000.01, "USD")).toThrow(/at most/);
  });
});

describe("PAYMENT_FX_RATES", () => {
  it("refuses, naming the variable, any entry that does not read instead of dropping it", () => {
    for (const bad of ["garbage", "KES=0,0077", "KES:0.0077", "EUR=1.08;KES=0.0077", "NGN=-1", "KES=0", "XX=1", "KES=1e999", "KES=0.0077,KES=0.008"]) {
      expect(() => config({ PAYMENT_FX_RATES: bad }), bad).toThrow(/PAYMENT_FX_RATES/);
    }
  });

  it("keeps USD at 1: coins are US cents, and a rate for it would change every payment's credit", () => {
    expect(() => config({ PAYMENT_FX_RATES: "USD=2" })).toThrow(/PAYMENT_FX_RATES must not set USD/);
    expect(coinsFor(config({ PAYMENT_FX_RATES: "KES=0.0077" }), 10, "USD")).toBe(1000);
  });

  it("is USD alone when unset or blank", () => {
    expect([...fxRates(config()).entries()]).toEqual([["USD", 1]]);
    expect([...fxRates(config({ PAYMENT_FX_RATES: " " })).entries()]).toEqual([["USD", 1]]);
  });
});

describe("mobile-money protocol details", () => {
  it("normalises Kenyan mobile numbers to 2547XXXXXXXX and refuses the rest", () => {
    for (const raw of ["0712345678", "+254712345678", "254712345678", " 0712-345-678 "]) expect(normalisePhone(raw)).toBe("254712345678");
    for (const raw of ["0112345678", "712345678", "+255712345678", "2547123456789", "07123456a8", ""]) expect(() => normalisePhone(raw)).toThrow(/phoneNumber/);
  });

  it("stamps the password with East Africa Time", () => {
    const ts = providerTimestamp(Date.UTC(2026, 0, 1, 22, 30, 5));
    expect(ts).toBe("20260102013005");
    expect(atob(stkPassword("174379", "passkey", ts))).toBe(`174379passkey${ts}`);
  });
});

describe("webhook signatures", () => {
  it("computes HMACs like the providers and compares them whatever the case", async () => {
    // RFC 4231 test case 2.
    const sha256 = await hmacSha256Hex("Jefe", "what do ya want for nothing?");
    expect(sha256).toBe("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    expect((await hmacSha512Hex("Jefe", "what do ya want for nothing?")).slice(0, 32)).toBe("164b7a7bfcf819e2e395fbe73b56e0a3");
    expect(await signatureMatches(sha256, sha256.toUpperCase())).toBe(true);
    expect(await signatureMatches(sha256, `${sha256.slice(0, -1)}0`)).toBe(false);
    expect(await signatureMatches(sha256, undefined)).toBe(false);
    expect(await signatureMatches(sha256, "")).toBe(false);
  });

  it("sorts keys at every depth, as the crypto provider signs", () => {
    expect(JSON.stringify(sortKeysDeep({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } }))).toBe('{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}');
  });

  it("gives up on a value nested deeper than any notification (undefined), without exhausting the stack", () => {
    const nested = (depth: number, leaf: unknown): unknown => (depth === 0 ? leaf : depth % 2 ? [nested(depth - 1, leaf)] : { k: nested(depth - 1, leaf) });
    expect(sortKeysDeep(nested(32, 1))).toEqual(nested(32, 1));
    expect(sortKeysDeep(nested(33, 1))).toBeUndefined();
    expect(sortKeysDeep(JSON.parse(`${"[".repeat(100_000)}${"]".repeat(100_000)}`))).toBeUndefined();
  });
});
