CREATE TABLE "payment_events" (
	"provider" text NOT NULL,
	"event_id" text NOT NULL,
	"payment_id" text,
	"kind" text NOT NULL,
	"outcome" text NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	CONSTRAINT "payment_events_provider_event_id_pk" PRIMARY KEY("provider","event_id")
);
--> statement-breakpoint
CREATE TABLE "payments" (
	"id" text PRIMARY KEY NOT NULL,
	"provider" text NOT NULL,
	"user_id" text NOT NULL,
	"status" text NOT NULL,
	"amount" numeric(30, 10) NOT NULL,
	"currency" text NOT NULL,
	"coins" bigint NOT NULL,
	"provider_ref" text,
	"callback_token" text,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"failure_reason" text,
	"ledger_transaction_id" text,
	"expires_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone,
	CONSTRAINT "payments_provider_check" CHECK ("payments"."provider" in ('card-a', 'card-b', 'crypto', 'mobile-money')),
	CONSTRAINT "payments_status_check" CHECK ("payments"."status" in ('pending', 'completed', 'failed', 'expired')),
	CONSTRAINT "payments_coins_positive" CHECK ("payments"."coins" > 0),
	CONSTRAINT "payments_completed_credited" CHECK (("payments"."status" = 'completed') = ("payments"."ledger_transaction_id" is not null))
);
--> statement-breakpoint
ALTER TABLE "payment_events" ADD CONSTRAINT "payment_events_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "payment_events_payment_idx" ON "payment_events" USING btree ("payment_id");--> statement-breakpoint
CREATE UNIQUE INDEX "payments_provider_ref_idx" ON "payments" USING btree ("provider","provider_ref");--> statement-breakpoint
CREATE UNIQUE INDEX "payments_callback_token_idx" ON "payments" USING btree ("callback_token");--> statement-breakpoint
CREATE UNIQUE INDEX "payments_ledger_transaction_idx" ON "payments" USING btree ("ledger_transaction_id");--> statement-breakpoint
CREATE INDEX "payments_user_idx" ON "payments" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "payments_pending_idx" ON "payments" USING btree ("created_at") WHERE "payments"."status" = 'pending';