CREATE TABLE "messaging_workflows" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"graph" jsonb NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"engine_id" text,
	"synced_version" integer,
	"synced_at" timestamp with time zone,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "messaging_workflows" ADD CONSTRAINT "messaging_workflows_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "messaging_workflows_created_idx" ON "messaging_workflows" USING btree ("created_at","id");