import { sortKeys } from "./sort-keys";
import { hmacHex, startFakeServer, type Delivery, type FakeServer } from "./fake-server";

export const CRYPTO = { apiKey: "crypto-api-key", ipnSecret: "crypto-ipn-secret" };
/** US dollars per coin, so pay amounts are predictable. */
export const CRYPTO_PRICES: Record<string, number> = { btc: 50_000, eth: 2_500, ltc: 80, bch: 400, usdc: 1, usdt: 1 };

export interface CryptoPayment {
  payment_id: string;
  payment_status: string;
  pay_address: string;
  price_amount: number;
  price_currency: string;
  pay_amount: number;
  actually_paid: number;
  pay_currency: string;
  order_id: string;
  order_description: string;
  ipn_callback_url: string;
  created_at: string;
  updated_at: string;
  purchase_id: string;
  outcome_amount: number;
  outcome_currency: string;
}

export interface CryptoFake extends FakeServer {
  env: Record<string, string>;
  payments: Map<string, CryptoPayment>;
  byOrder(orderId: string): CryptoPayment;
  setStatus(orderId: string, status: string): CryptoPayment;
  /** The payment notification as the provider sends it: the body as is, signed over its key-sorted JSON. */
  ipn(orderId: string, overrides?: Partial<CryptoPayment>): Delivery;
}

let nextPayment = 5_745_459_000;

/** NOWPayments-style: `POST /v1/payment`, `GET /v1/payment/{id}`, IPNs signed with `x-nowpayments-sig`. */
export async function startCryptoFake(): Promise<CryptoFake> {
  const payments = new Map<string, CryptoPayment>();
  const server = await startFakeServer(
    (req) => {
      if (req.headers["x-api-key"] !== CRYPTO.apiKey) return { status: 403, body: { status: false, statusCode: 403, code: "INVALID_API_KEY", message: "Invalid api key" } };
      if (req.method === "POST" && req.path === "/v1/payment") {
        const b = req.body as { price_amount?: number; price_currency?: string; pay_currency?: string; order_id?: string; ipn_callback_url?: string; order_description?: string };
        const price = CRYPTO_PRICES[b.pay_currency ?? ""];
        if (!b.price_amount || !price) return { status: 400, body: { status: false, statusCode: 400, code: "BAD_CREATE_PAYMENT_REQUEST", message: "Currency not supported" } };
        const id = String(nextPayment++);
        const now = new Date().toISOString();
        const p: CryptoPayment = {
          payment_id: id,
          payment_status: "waiting",
          pay_address: `addr_${b.pay_currency}_${id}`,
          price_amount: b.price_amount,
          price_currency: b.price_currency ?? "usd",
          pay_amount: Number((b.price_amount / price).toFixed(8)),
          actually_paid: 0,
          pay_currency: b.pay_currency ?? "",
          order_id: b.order_id ?? "",
          order_description: b.order_description ?? "",
          ipn_callback_url: b.ipn_callback_url ?? "",
          created_at: now,
          updated_at: now,
          purchase_id: String(Number(id) + 1),
          outcome_amount: 0,
          outcome_currency: b.pay_currency ?? "",
        };
        payments.set(id, p);
        return { status: 201, body: p };
      }
      const get = /^\/v1\/payment\/(\d+)$/.exec(req.path);
      if (req.method === "GET" && get) {
        const p = payments.get(get[1] ?? "");
        return p ? { status: 200, body: p } : { status: 404, body: { status: false, statusCode: 404, code: "NOT_FOUND", message: "Payment not found" } };
      }
      return { status: 404, body: { status: false, statusCode: 404, message: "Not found" } };
    },
    { status: 500, body: { status: false, statusCode: 500, code: "INTERNAL_ERROR", message: "Internal server error" } },
  );
  const byOrder = (orderId: string): CryptoPayment => {
    const p = [...payments.values()].find((x) => x.order_id === orderId);
    if (!p) throw new Error(`no crypto payment for ${orderId}`);
    return p;
  };
  return Object.assign(server, {
    env: { CRYPTO_API_URL: server.url, CRYPTO_API_KEY: CRYPTO.apiKey, CRYPTO_IPN_SECRET: CRYPTO.ipnSecret },
    payments,
    byOrder,
    setStatus(orderId: string, status: string): CryptoPayment {
      const p = byOrder(orderId);
      p.payment_status = status;
      if (status === "finished") {
        p.actually_paid = p.pay_amount;
        p.outcome_amount = p.pay_amount;
      }
      return p;
    },
    ipn(orderId: string, overrides: Partial<CryptoPayment> = {}): Delivery {
      const p = { ...byOrder(orderId), ...overrides };
      const body = JSON.stringify(p);
      return { path: "/api/payments/crypto/ipn", body, headers: { "x-nowpayments-sig": hmacHex("sha512", CRYPTO.ipnSecret, JSON.stringify(sortKeys(p))) } };
    },
  });
}
