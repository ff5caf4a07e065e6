CREATE TABLE "support_answers" (
	"id" text PRIMARY KEY NOT NULL,
	"category" text NOT NULL,
	"language" text NOT NULL,
	"via" text NOT NULL,
	"escalated" boolean NOT NULL,
	"reasons" jsonb NOT NULL,
	"cited" boolean NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "support_answers_via_check" CHECK ("support_answers"."via" in ('model', 'fallback'))
);
--> statement-breakpoint
CREATE TABLE "support_tickets" (
	"id" text PRIMARY KEY NOT NULL,
	"answer_id" text NOT NULL,
	"user_id" text NOT NULL,
	"category" text NOT NULL,
	"language" text NOT NULL,
	"reasons" jsonb NOT NULL,
	"status" text DEFAULT 'open' NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"resolved_at" timestamp with time zone,
	"resolved_by" text,
	CONSTRAINT "support_tickets_answer_id_unique" UNIQUE("answer_id"),
	CONSTRAINT "support_tickets_status_check" CHECK ("support_tickets"."status" in ('open', 'resolved'))
);
--> statement-breakpoint
ALTER TABLE "support_tickets" ADD CONSTRAINT "support_tickets_answer_id_support_answers_id_fk" FOREIGN KEY ("answer_id") REFERENCES "public"."support_answers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "support_tickets" ADD CONSTRAINT "support_tickets_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "support_tickets" ADD CONSTRAINT "support_tickets_resolved_by_users_id_fk" FOREIGN KEY ("resolved_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "support_answers_created_idx" ON "support_answers" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "support_tickets_status_created_idx" ON "support_tickets" USING btree ("status","created_at");