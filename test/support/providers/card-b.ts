import { randomBytes } from "node:crypto";
import { startFakeServer, type Delivery, type FakeServer } from "./fake-server";

export const CARD_B = { secretKey: "FLWSECK_TEST-card-b-secret-X", webhookSecret: "card-b-verification-hash" };

export interface CardBTransaction {
  id: number;
  tx_ref: string;
  flw_ref: string;
  amount: number;
  charged_amount: number;
  currency: string;
  status: "successful" | "failed" | "pending";
  customer: { email: string; phone_number: string | null };
  created_at: string;
}

export interface CardBFake extends FakeServer {
  env: Record<string, string>;
  links: Map<string, { tx_ref: string; amount: number; currency: string; email: string }>;
  transactions: Map<number, CardBTransaction>;
  /** The payer pays on the hosted page: the provider now has a transaction for the reference. */
  pay(txRef: string, overrides?: Partial<Pick<CardBTransaction, "amount" | "currency" | "status">>): CardBTransaction;
  /** The `charge.completed` webhook for a transaction; `body` overrides what the webhook claims. */
  webhook(tx: CardBTransaction, body?: Partial<CardBTransaction>): Delivery;
  verifyCalls(): number;
  /** The next hosted link is answered with this as its `link` (a provider answering garbage). */
  answerNextLink(link: string): void;
}

let nextId = 9_000_000;

/** Flutterwave-style: `POST /v3/payments` hosted links, `verif-hash` webhooks, `GET /v3/transactions/{id}/verify`. */
export async function startCardBFake(): Promise<CardBFake> {
  const links = new Map<string, { tx_ref: string; amount: number; currency: string; email: string }>();
  const transactions = new Map<number, CardBTransaction>();
  let nextLink: string | undefined;
  const server = await startFakeServer(
    (req) => {
      if (req.headers.authorization !== `Bearer ${CARD_B.secretKey}`) return { status: 401, body: { status: "error", message: "Invalid authorization key", data: null } };
      if (req.method === "POST" && req.path === "/v3/payments") {
        const b = req.body as { tx_ref?: string; amount?: number; currency?: string; redirect_url?: string; customer?: { email?: string } };
        if (!b.tx_ref || !b.amount || !b.redirect_url || !b.customer?.email) return { status: 400, body: { status: "error", message: "Invalid payload", data: null } };
        const token = randomBytes(12).toString("hex");
        links.set(token, { tx_ref: b.tx_ref, amount: b.amount, currency: b.currency ?? "NGN", email: b.customer.email });
        const link = nextLink ?? `https://checkout.card-b.test/v3/hosted/pay/${token}`;
        nextLink = undefined;
        return { status: 200, body: { status: "success", message: "Hosted Link", data: { link } } };
      }
      const verify = /^\/v3\/transactions\/(\d+)\/verify$/.exec(req.path);
      if (req.method === "GET" && verify) {
        const tx = transactions.get(Number(verify[1]));
        if (!tx) return { status: 400, body: { status: "error", message: "No transaction was found for this id", data: null } };
        return { status: 200, body: { status: "success", message: "Transaction fetched successfully", data: tx } };
      }
      if (req.method === "GET" && req.path === "/v3/transactions/verify_by_reference") {
        const ref = req.query.get("tx_ref");
        const tx = [...transactions.values()].reverse().find((t) => t.tx_ref === ref);
        if (!tx) return { status: 400, body: { status: "error", message: "No transaction was found for this tx_ref", data: null } };
        return { status: 200, body: { status: "success", message: "Transaction fetched successfully", data: tx } };
      }
      return { status: 404, body: { status: "error", message: "Not found", data: null } };
    },
    { status: 500, body: { status: "error", message: "Internal server error", data: null } },
  );
  return Object.assign(server, {
    env: { CARD_B_API_URL: server.url, CARD_B_SECRET_KEY: CARD_B.secretKey, CARD_B_WEBHOOK_SECRET: CARD_B.webhookSecret },
    links,
    transactions,
    pay(txRef: string, overrides: Partial<Pick<CardBTransaction, "amount" | "currency" | "status">> = {}): CardBTransaction {
      const link = [...links.values()].find((l) => l.tx_ref === txRef);
      const amount = overrides.amount ?? link?.amount ?? 0;
      const id = nextId++;
      const tx: CardBTransaction = {
        id,
        tx_ref: txRef,
        flw_ref: `FLW-MOCK-${id}`,
        amount,
        charged_amount: amount,
        currency: overrides.currency ?? link?.currency ?? "USD",
        status: overrides.status ?? "successful",
        customer: { email: link?.email ?? "payer@example.test", phone_number: null },
        created_at: new Date().toISOString(),
      };
      transactions.set(id, tx);
      return tx;
    },
    webhook(tx: CardBTransaction, body: Partial<CardBTransaction> = {}): Delivery {
      return {
        path: "/api/v1/payments/card-b/webhook",
        body: JSON.stringify({ event: "charge.completed", data: { ...tx, ...body } }),
        headers: { "verif-hash": CARD_B.webhookSecret },
      };
    },
    verifyCalls: () => server.requests.filter((r) => r.path.endsWith("/verify")).length,
    answerNextLink: (link: string) => {
      nextLink = link;
    },
  });
}
