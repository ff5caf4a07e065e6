-- A payment remembers the Idempotency-Key of the request that created it, so that a retry taking
-- over the key of a request that died (services/idempotency/keys.ts) finds the payment instead of
-- asking the provider again (services/payments/store.ts createPending). One payment per key and user.
ALTER TABLE "payments" ADD COLUMN "idempotency_key" text;--> statement-breakpoint
CREATE UNIQUE INDEX "payments_idempotency_key_idx" ON "payments" USING btree ("user_id","idempotency_key");