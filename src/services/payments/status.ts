import type { Principal } from "../../auth/principal";
import { ApiError } from "../../errors";
import type { Db } from "../../db/port";
import type { Provider } from "./context";
import { ID_PREFIX, findPayment } from "./store";

export interface PaymentStatusResult {
  status: "success";
  paymentId: string;
  paymentStatus: "pending" | "completed" | "failed" | "expired";
  amount: number;
  currency: string;
  provider: Provider;
  /** Unix seconds of the last change of the payment's state. */
  timestamp: number;
}

const ID = new RegExp(`^(${Object.values(ID_PREFIX).join("|")})_[0-9a-hjkmnp-tv-z]{26}$`);

/**
 * A payment by any id we returned for it (fundingRequestId, transactionId, paymentId, requestId).
 * Someone else's payment answers the same 404 as one that does not exist.
 */
export async function paymentStatus(db: Db, actor: Principal, paymentId: string): Promise<PaymentStatusResult> {
  const payment = ID.test(paymentId) ? await findPayment(db, paymentId) : undefined;
  if (!payment || (payment.userId !== actor.userId && actor.role !== "admin")) throw new ApiError("not_found", "no such payment");
  return {
    status: "success",
    paymentId: payment.id,
    paymentStatus: payment.status as PaymentStatusResult["paymentStatus"],
    amount: payment.amount,
    currency: payment.currency,
    provider: payment.provider as Provider,
    timestamp: Math.floor(payment.updatedAt.getTime() / 1000),
  };
}
