CREATE TABLE "delivery_records" (
	"id" text PRIMARY KEY NOT NULL,
	"channel" text NOT NULL,
	"route" text NOT NULL,
	"outcome" text NOT NULL,
	"latency_ms" integer,
	"status_code" integer,
	"error" text,
	"message_id" text,
	"occurred_at" timestamp with time zone NOT NULL,
	CONSTRAINT "delivery_records_outcome_check" CHECK ("delivery_records"."outcome" in ('sent', 'delivered', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "outbox_messages" (
	"id" text PRIMARY KEY NOT NULL,
	"seq" bigserial NOT NULL,
	"kind" text NOT NULL,
	"channel" text NOT NULL,
	"target_id" text NOT NULL,
	"body" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"last_attempt_at" timestamp with time zone,
	"last_error" text,
	"created_at" timestamp with time zone NOT NULL,
	"delivered_at" timestamp with time zone,
	CONSTRAINT "outbox_status_check" CHECK ("outbox_messages"."status" in ('pending', 'delivered', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "partners" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"company_name" text NOT NULL,
	"contact_name" text NOT NULL,
	"contact_email" text NOT NULL,
	"website" text,
	"description" text NOT NULL,
	"business_type" text NOT NULL,
	"country" text NOT NULL,
	"status" text DEFAULT 'pending_review' NOT NULL,
	"reviewed_by" text,
	"reviewed_at" timestamp with time zone,
	"review_request_id" text,
	"rejection_reason" text,
	"webhook_url" text,
	"webhook_events" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"webhook_enabled" boolean DEFAULT false NOT NULL,
	"webhook_secret" text,
	"webhook_previous_secret" text,
	"webhook_previous_secret_until" timestamp with time zone,
	"webhook_failing_since" timestamp with time zone,
	"webhook_disabled_reason" text,
	"webhook_disabled_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "partners_status_check" CHECK ("partners"."status" in ('pending_review', 'approved', 'rejected'))
);
--> statement-breakpoint
ALTER TABLE "partners" ADD CONSTRAINT "partners_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "partners" ADD CONSTRAINT "partners_reviewed_by_users_id_fk" FOREIGN KEY ("reviewed_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "delivery_records_window_idx" ON "delivery_records" USING btree ("occurred_at","channel");--> statement-breakpoint
CREATE INDEX "delivery_records_message_idx" ON "delivery_records" USING btree ("message_id","occurred_at");--> statement-breakpoint
CREATE INDEX "outbox_due_idx" ON "outbox_messages" USING btree ("next_attempt_at") WHERE "outbox_messages"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "outbox_target_idx" ON "outbox_messages" USING btree ("target_id","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "partners_user_idx" ON "partners" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "partners_status_idx" ON "partners" USING btree ("status","created_at");