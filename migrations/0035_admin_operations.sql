CREATE TABLE "admin_audit_log" (
	"id" text PRIMARY KEY NOT NULL,
	"actor_user_id" text NOT NULL,
	"credential" text NOT NULL,
	"api_key_id" text,
	"action" text NOT NULL,
	"target_type" text NOT NULL,
	"target_id" text NOT NULL,
	"request_id" text NOT NULL,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "admin_audit_credential_check" CHECK ("admin_audit_log"."credential" in ('token', 'api_key'))
);
--> statement-breakpoint
CREATE TABLE "config_documents" (
	"name" text PRIMARY KEY NOT NULL,
	"value" jsonb NOT NULL,
	"version" integer NOT NULL,
	"updated_by" text NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "voucher_batches" (
	"id" text PRIMARY KEY NOT NULL,
	"coins" integer NOT NULL,
	"count" integer NOT NULL,
	"note" text,
	"expires_at" timestamp with time zone,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "voucher_batches_coins_check" CHECK ("voucher_batches"."coins" > 0)
);
--> statement-breakpoint
CREATE TABLE "vouchers" (
	"id" text PRIMARY KEY NOT NULL,
	"batch_id" text NOT NULL,
	"code_hash" text NOT NULL,
	"hint" text NOT NULL,
	"coins" integer NOT NULL,
	"expires_at" timestamp with time zone,
	"status" text DEFAULT 'active' NOT NULL,
	"redeemed_by" text,
	"redeemed_at" timestamp with time zone,
	"ledger_transaction_id" text,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "vouchers_code_hash_unique" UNIQUE("code_hash"),
	CONSTRAINT "vouchers_ledger_transaction_id_unique" UNIQUE("ledger_transaction_id"),
	CONSTRAINT "vouchers_status_check" CHECK ("vouchers"."status" in ('active', 'redeemed', 'revoked')),
	CONSTRAINT "vouchers_redeemed_check" CHECK (("vouchers"."status" = 'redeemed') = ("vouchers"."redeemed_by" is not null and "vouchers"."ledger_transaction_id" is not null))
);
--> statement-breakpoint
ALTER TABLE "vouchers" ADD CONSTRAINT "vouchers_batch_id_voucher_batches_id_fk" FOREIGN KEY ("batch_id") REFERENCES "public"."voucher_batches"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "vouchers" ADD CONSTRAINT "vouchers_redeemed_by_users_id_fk" FOREIGN KEY ("redeemed_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "admin_audit_actor_idx" ON "admin_audit_log" USING btree ("actor_user_id","id");--> statement-breakpoint
CREATE INDEX "admin_audit_action_idx" ON "admin_audit_log" USING btree ("action","id");--> statement-breakpoint
CREATE INDEX "admin_audit_target_idx" ON "admin_audit_log" USING btree ("target_type","target_id");--> statement-breakpoint
CREATE INDEX "voucher_batches_created_idx" ON "voucher_batches" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "vouchers_batch_status_idx" ON "vouchers" USING btree ("batch_id","status");--> statement-breakpoint
-- Voucher redemptions are ledger transactions of their own type (mint → wallet), so supply and
-- finance figures tell them from admin awards.
CREATE OR REPLACE FUNCTION ledger_check_transaction_shape() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.type IS NULL OR NEW.type NOT IN ('transfer', 'award', 'subscription', 'funding', 'voucher') THEN
    RAISE EXCEPTION 'ledger transaction type % is unknown', NEW.type
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_transactions_type_check';
  END IF;
  RETURN NEW;
END;
$$;
