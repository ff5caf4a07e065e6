CREATE TABLE "support_video_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"seq" bigserial NOT NULL,
	"user_id" text NOT NULL,
	"reason" text NOT NULL,
	"priority" text NOT NULL,
	"priority_rank" smallint NOT NULL,
	"platform" text NOT NULL,
	"language" text NOT NULL,
	"callback_times" jsonb NOT NULL,
	"timezone" text NOT NULL,
	"status" text DEFAULT 'waiting' NOT NULL,
	"filed_by" text,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "support_video_priority_check" CHECK ("support_video_requests"."priority" in ('low', 'normal', 'high', 'urgent')),
	CONSTRAINT "support_video_status_check" CHECK ("support_video_requests"."status" in ('waiting', 'in_call', 'done', 'cancelled'))
);
--> statement-breakpoint
ALTER TABLE "support_video_requests" ADD CONSTRAINT "support_video_requests_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "support_video_requests" ADD CONSTRAINT "support_video_requests_filed_by_users_id_fk" FOREIGN KEY ("filed_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "support_video_seq_idx" ON "support_video_requests" USING btree ("seq");--> statement-breakpoint
CREATE UNIQUE INDEX "support_video_one_waiting_idx" ON "support_video_requests" USING btree ("user_id") WHERE "support_video_requests"."status" = 'waiting';--> statement-breakpoint
CREATE INDEX "support_video_queue_idx" ON "support_video_requests" USING btree ("priority_rank" DESC NULLS LAST,"seq") WHERE "support_video_requests"."status" = 'waiting';