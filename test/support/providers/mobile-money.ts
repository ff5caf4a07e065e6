import { randomBytes } from "node:crypto";
import { startFakeServer, type Delivery, type FakeServer } from "./fake-server";

export const MOBILE = { consumerKey: "mm-consumer-key", consumerSecret: "mm-consumer-secret", shortcode: "174379", passkey: "mm-passkey-0123456789" };

interface StkRequest {
  merchantRequestId: string;
  checkoutRequestId: string;
  amount: number;
  phone: string;
  callbackUrl: string;
  /** Undefined while the payer has not answered the prompt. */
  resultCode?: number;
}

export interface MobileMoneyFake extends FakeServer {
  env: Record<string, string>;
  stk: Map<string, StkRequest>;
  tokensIssued(): number;
  /** What `expires_in` the OAuth answer carries from now on (Daraja sends a string of seconds). */
  setTokenExpiresIn(seconds: string): void;
  /** The payer answers the prompt: 0 paid, 1032 cancelled, 1 insufficient funds… */
  complete(checkoutRequestId: string, resultCode: number): void;
  /** The provider's callback to the URL it was given (unsigned), with whatever result the body claims. */
  callback(checkoutRequestId: string, claimedResultCode?: number): Delivery;
}

/** Daraja-style: client-credentials OAuth, STK push with a timestamped password, STK status query, callbacks. */
export async function startMobileMoneyFake(callbackBase = "https://api.example.test/api/v1/mobile-money/callback"): Promise<MobileMoneyFake> {
  const stk = new Map<string, StkRequest>();
  const tokens = new Set<string>();
  let issued = 0;
  let expiresIn = "3599";
  const passwordOk = (b: { BusinessShortCode?: string; Password?: string; Timestamp?: string }) =>
    typeof b.Timestamp === "string" && /^\d{14}$/.test(b.Timestamp) && b.Password === Buffer.from(`${MOBILE.shortcode}${MOBILE.passkey}${b.Timestamp}`).toString("base64");
  const server = await startFakeServer(
    (req) => {
      if (req.method === "GET" && req.path === "/oauth/v1/generate") {
        const basic = `Basic ${Buffer.from(`${MOBILE.consumerKey}:${MOBILE.consumerSecret}`).toString("base64")}`;
        if (req.query.get("grant_type") !== "client_credentials" || req.headers.authorization !== basic) return { status: 400, body: { errorCode: "400.008.01", errorMessage: "Invalid Authentication passed" } };
        const token = randomBytes(14).toString("base64url");
        tokens.add(token);
        issued++;
        return { status: 200, body: { access_token: token, expires_in: expiresIn } };
      }
      const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ""))?.[1];
      if (!bearer || !tokens.has(bearer)) return { status: 401, body: { requestId: "r", errorCode: "404.001.03", errorMessage: "Invalid Access Token" } };
      const b = req.body as { BusinessShortCode?: string; Password?: string; Timestamp?: string; Amount?: number; PhoneNumber?: string; CallBackURL?: string; CheckoutRequestID?: string; TransactionType?: string };
      if (!passwordOk(b) || b.BusinessShortCode !== MOBILE.shortcode) return { status: 400, body: { requestId: "r", errorCode: "400.002.02", errorMessage: "Bad Request - Invalid Password" } };
      if (req.method === "POST" && req.path === "/mpesa/stkpush/v1/processrequest") {
        if (b.TransactionType !== "CustomerPayBillOnline" || !b.CallBackURL || !/^2547\d{8}$/.test(String(b.PhoneNumber))) {
          return { status: 400, body: { requestId: "r", errorCode: "400.002.02", errorMessage: "Bad Request - Invalid PhoneNumber" } };
        }
        const n = randomBytes(6).toString("hex");
        const r: StkRequest = { merchantRequestId: `29115-${n}`, checkoutRequestId: `ws_CO_${n}`, amount: Number(b.Amount), phone: String(b.PhoneNumber), callbackUrl: b.CallBackURL };
        stk.set(r.checkoutRequestId, r);
        return {
          status: 200,
          body: { MerchantRequestID: r.merchantRequestId, CheckoutRequestID: r.checkoutRequestId, ResponseCode: "0", ResponseDescription: "Success. Request accepted for processing", CustomerMessage: "Success. Request accepted for processing" },
        };
      }
      if (req.method === "POST" && req.path === "/mpesa/stkpushquery/v1/query") {
        const r = stk.get(String(b.CheckoutRequestID));
        if (!r) return { status: 400, body: { requestId: "r", errorCode: "400.002.02", errorMessage: "Bad Request - Invalid CheckoutRequestID" } };
        if (r.resultCode === undefined) return { status: 500, body: { requestId: "r", errorCode: "500.001.1001", errorMessage: "The transaction is being processed" } };
        return {
          status: 200,
          body: {
            ResponseCode: "0",
            ResponseDescription: "The service request has been accepted successsfully",
            MerchantRequestID: r.merchantRequestId,
            CheckoutRequestID: r.checkoutRequestId,
            ResultCode: String(r.resultCode),
            ResultDesc: r.resultCode === 0 ? "The service request is processed successfully." : "Request cancelled by user",
          },
        };
      }
      return { status: 404, body: { errorCode: "404.001.01", errorMessage: "Resource not found" } };
    },
    { status: 503, body: { requestId: "r", errorCode: "503.001.01", errorMessage: "Service Unavailable" } },
  );
  return Object.assign(server, {
    env: {
      MOBILE_MONEY_API_URL: server.url,
      MOBILE_MONEY_CONSUMER_KEY: MOBILE.consumerKey,
      MOBILE_MONEY_CONSUMER_SECRET: MOBILE.consumerSecret,
      MOBILE_MONEY_SHORTCODE: MOBILE.shortcode,
      MOBILE_MONEY_PASSKEY: MOBILE.passkey,
      MOBILE_MONEY_CALLBACK_URL: callbackBase,
    },
    stk,
    tokensIssued: () => issued,
    setTokenExpiresIn: (seconds: string) => {
      expiresIn = seconds;
    },
    complete(checkoutRequestId: string, resultCode: number) {
      const r = stk.get(checkoutRequestId);
      if (!r) throw new Error(`no STK request ${checkoutRequestId}`);
      r.resultCode = resultCode;
    },
    callback(checkoutRequestId: string, claimedResultCode?: number): Delivery {
      const r = stk.get(checkoutRequestId);
      if (!r) throw new Error(`no STK request ${checkoutRequestId}`);
      const code = claimedResultCode ?? r.resultCode ?? 0;
      const stkCallback: Record<string, unknown> = {
        MerchantRequestID: r.merchantRequestId,
        CheckoutRequestID: r.checkoutRequestId,
        ResultCode: code,
        ResultDesc: code === 0 ? "The service request is processed successfully." : "Request cancelled by user",
      };
      if (code === 0) {
        stkCallback.CallbackMetadata = {
          Item: [
            { Name: "Amount", Value: r.amount },
            { Name: "MpesaReceiptNumber", Value: `NLJ7RT${randomBytes(2).toString("hex").toUpperCase()}` },
            { Name: "TransactionDate", Value: 20261121013000 },
            { Name: "PhoneNumber", Value: Number(r.phone) },
          ],
        };
      }
      return { path: new URL(r.callbackUrl).pathname, body: JSON.stringify({ Body: { stkCallback } }), headers: {} };
    },
  });
}
