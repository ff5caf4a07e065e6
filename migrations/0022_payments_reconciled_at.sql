-- Reconciliation (services/payments/reconcile.ts) takes the payments it asks about least recently
-- asked first, stamping reconciled_at, so a backlog larger than one pass is worked through instead
-- of the same oldest rows being re-read every pass. It also asks about failed card-b payments (a
-- later attempt on the same link may succeed), found through the partial index below.
ALTER TABLE "payments" ADD COLUMN "reconciled_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "payments_failed_card_b_idx" ON "payments" USING btree ("created_at") WHERE "payments"."status" = 'failed' and "payments"."provider" = 'card-b';