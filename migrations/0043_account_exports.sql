CREATE TABLE "account_exports" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"lease_until" timestamp with time zone,
	"last_error" text,
	"document" text,
	"byte_size" integer,
	"token_hash" text,
	"created_at" timestamp with time zone NOT NULL,
	"started_at" timestamp with time zone,
	"ready_at" timestamp with time zone,
	"expires_at" timestamp with time zone,
	"downloaded_at" timestamp with time zone,
	CONSTRAINT "account_exports_status_check" CHECK ("account_exports"."status" in ('pending', 'running', 'ready', 'failed', 'expired'))
);
--> statement-breakpoint
ALTER TABLE "account_exports" ADD CONSTRAINT "account_exports_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "account_exports_user_idx" ON "account_exports" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "account_exports_open_idx" ON "account_exports" USING btree ("created_at") WHERE "account_exports"."status" in ('pending', 'running');--> statement-breakpoint
CREATE UNIQUE INDEX "account_exports_token_idx" ON "account_exports" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "winks_sender_idx" ON "winks" USING btree ("sender_id","id");