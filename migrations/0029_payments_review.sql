-- Money a person must deal with (taken but not credited, taken twice, refunded or charged back after
-- the credit) is recorded on its payment, review_reason, and listed through payments_review_idx.
-- Reconciliation now also asks about failed and expired payments of every provider it can ask (not
-- only failed card-b ones) until PAYMENT_EXPIRE_AFTER_SECONDS, so its partial index widens.
DROP INDEX "payments_failed_card_b_idx";--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "review_reason" text;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "review_flagged_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "payments_recheck_idx" ON "payments" USING btree ("created_at") WHERE "payments"."status" in ('failed', 'expired') and "payments"."provider" <> 'card-a';--> statement-breakpoint
CREATE INDEX "payments_review_idx" ON "payments" USING btree ("review_flagged_at") WHERE "payments"."review_reason" is not null;