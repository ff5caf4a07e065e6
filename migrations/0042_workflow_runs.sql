CREATE TABLE "workflow_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"workflow_id" text NOT NULL,
	"workflow_version" integer NOT NULL,
	"trigger" text NOT NULL,
	"event_id" bigint,
	"input" jsonb NOT NULL,
	"status" text NOT NULL,
	"token_hash" text NOT NULL,
	"error" text,
	"deliveries" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"updated_at" timestamp with time zone NOT NULL,
	"deadline_at" timestamp with time zone NOT NULL,
	CONSTRAINT "workflow_runs_status_check" CHECK ("workflow_runs"."status" in ('queued', 'running', 'succeeded', 'failed', 'timed_out'))
);
--> statement-breakpoint
ALTER TABLE "messaging_workflows" ADD COLUMN "activated_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD CONSTRAINT "workflow_runs_workflow_id_messaging_workflows_id_fk" FOREIGN KEY ("workflow_id") REFERENCES "public"."messaging_workflows"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD CONSTRAINT "workflow_runs_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "workflow_runs_event_idx" ON "workflow_runs" USING btree ("workflow_id","event_id");--> statement-breakpoint
CREATE INDEX "workflow_runs_list_idx" ON "workflow_runs" USING btree ("workflow_id","created_at","id");--> statement-breakpoint
CREATE INDEX "workflow_runs_open_idx" ON "workflow_runs" USING btree ("deadline_at") WHERE "workflow_runs"."status" in ('queued', 'running');