import { randomUUID } from "node:crypto";
import { hmacHex, startFakeServer, type Delivery, type FakeServer } from "./fake-server";

export const CARD_A = { apiKey: "card-a-api-key", storeId: "4242", variantId: "777", webhookSecret: "card-a-signing-secret" };

interface Checkout {
  id: string;
  customPrice: number;
  custom: Record<string, unknown>;
}

export interface CardAFake extends FakeServer {
  env: Record<string, string>;
  checkouts: Map<string, Checkout>;
  /** An `order_created` webhook for the checkout of a funding request, signed like the provider signs it. */
  /** A signed order event; `event` defaults to order_created (order_refunded is another the provider sends). */
  orderWebhook(fundingRequestId: string, order?: { status?: string; subtotal?: number; discountTotal?: number; currency?: string; orderId?: number; event?: string }): Delivery;
  /** The next checkout is answered with this as its `url` (a provider answering garbage). */
  answerNextUrl(url: string): void;
}

let nextOrder = 1000;

/** Lemon-Squeezy-style: JSON:API checkouts with custom price and custom data; HMAC-SHA256 (`X-Signature`) order webhooks. */
export async function startCardAFake(): Promise<CardAFake> {
  const checkouts = new Map<string, Checkout>();
  let nextUrl: string | undefined;
  const takeNextUrl = () => {
    const url = nextUrl;
    nextUrl = undefined;
    return url;
  };
  function orderWebhook(fundingRequestId: string, order: { status?: string; subtotal?: number; discountTotal?: number; currency?: string; orderId?: number; event?: string } = {}): Delivery {
    const event = order.event ?? "order_created";
    const checkout = [...checkouts.values()].find((c) => c.custom.funding_request_id === fundingRequestId);
    const subtotal = order.subtotal ?? checkout?.customPrice ?? 0;
    const body = JSON.stringify({
      meta: { event_name: event, custom_data: { funding_request_id: fundingRequestId, ...(checkout?.custom ?? {}) }, webhook_id: randomUUID() },
      data: {
        type: "orders",
        id: String(order.orderId ?? nextOrder++),
        attributes: { store_id: Number(CARD_A.storeId), status: order.status ?? "paid", currency: order.currency ?? "USD", subtotal, discount_total: order.discountTotal ?? 0, total: subtotal - (order.discountTotal ?? 0), first_order_item: { variant_id: Number(CARD_A.variantId) } },
      },
    });
    return { path: "/api/payments/card-a/webhook", body, headers: { "x-event-name": event, "x-signature": hmacHex("sha256", CARD_A.webhookSecret, body) } };
  }
  const server = await startFakeServer(
    (req) => {
      // A test helper, as providers' sandboxes have: the signed event for a checkout, for tests
      // that run where this process's objects cannot reach (workerd).
      if (req.method === "POST" && req.path === "/__test/order-webhook") {
        const { fundingRequestId, order } = req.body as { fundingRequestId: string; order?: Parameters<typeof orderWebhook>[1] };
        return { status: 200, body: orderWebhook(fundingRequestId, order) };
      }
      if (req.headers.authorization !== `Bearer ${CARD_A.apiKey}`) return { status: 401, body: { errors: [{ status: "401", title: "Unauthenticated" }] } };
      if (req.method === "POST" && req.path === "/v1/checkouts") {
        if (!String(req.headers["content-type"]).startsWith("application/vnd.api+json")) return { status: 415, body: { errors: [{ status: "415" }] } };
        const data = (req.body as { data?: { type?: string; attributes?: Record<string, unknown>; relationships?: Record<string, { data?: { id?: string } }> } }).data;
        if (data?.type !== "checkouts" || data.relationships?.store?.data?.id !== CARD_A.storeId || data.relationships?.variant?.data?.id !== CARD_A.variantId) {
          return { status: 422, body: { errors: [{ status: "422", title: "Unprocessable Entity" }] } };
        }
        const attrs = data.attributes ?? {};
        const id = randomUUID();
        const custom = ((attrs.checkout_data as { custom?: Record<string, unknown> } | undefined)?.custom ?? {}) as Record<string, unknown>;
        checkouts.set(id, { id, customPrice: Number(attrs.custom_price), custom });
        return {
          status: 201,
          headers: { "content-type": "application/vnd.api+json" },
          body: {
            jsonapi: { version: "1.0" },
            data: {
              type: "checkouts",
              id,
              attributes: {
                store_id: Number(CARD_A.storeId),
                variant_id: Number(CARD_A.variantId),
                custom_price: attrs.custom_price,
                checkout_data: attrs.checkout_data,
                expires_at: attrs.expires_at ?? null,
                url: takeNextUrl() ?? `https://shop.card-a.test/checkout/custom/${id}?signature=${hmacHex("sha256", "url", id).slice(0, 16)}`,
              },
            },
          },
        };
      }
      return { status: 404, body: { errors: [{ status: "404", title: "Not Found" }] } };
    },
    { status: 500, body: { errors: [{ status: "500", title: "Internal Server Error" }] } },
  );
  return Object.assign(server, {
    env: { CARD_A_API_URL: server.url, CARD_A_API_KEY: CARD_A.apiKey, CARD_A_STORE_ID: CARD_A.storeId, CARD_A_VARIANT_ID: CARD_A.variantId, CARD_A_WEBHOOK_SECRET: CARD_A.webhookSecret },
    checkouts,
    orderWebhook,
    answerNextUrl: (url: string) => {
      nextUrl = url;
    },
  });
}
