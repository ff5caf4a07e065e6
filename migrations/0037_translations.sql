CREATE TABLE "translation_cache" (
	"kind" text NOT NULL,
	"cache_key" text NOT NULL,
	"target_language" text NOT NULL,
	"result" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "translation_cache_kind_cache_key_target_language_pk" PRIMARY KEY("kind","cache_key","target_language"),
	CONSTRAINT "translation_cache_kind_check" CHECK ("translation_cache"."kind" in ('message', 'profile'))
);
--> statement-breakpoint
CREATE TABLE "translation_jobs" (
	"id" text PRIMARY KEY NOT NULL,
	"namespace" text NOT NULL,
	"overwrite" boolean NOT NULL,
	"status" text NOT NULL,
	"progress" jsonb NOT NULL,
	"last_error" text,
	"lease_until" timestamp with time zone,
	"requested_by" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "translation_jobs_status_check" CHECK ("translation_jobs"."status" in ('queued', 'running', 'waiting', 'done'))
);
--> statement-breakpoint
CREATE TABLE "translation_strings" (
	"namespace" text NOT NULL,
	"language" text NOT NULL,
	"key" text NOT NULL,
	"value" text NOT NULL,
	"source_hash" text NOT NULL,
	"origin" text NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "translation_strings_namespace_language_key_pk" PRIMARY KEY("namespace","language","key"),
	CONSTRAINT "translation_strings_origin_check" CHECK ("translation_strings"."origin" in ('source', 'admin', 'machine'))
);
--> statement-breakpoint
ALTER TABLE "translation_jobs" ADD CONSTRAINT "translation_jobs_requested_by_users_id_fk" FOREIGN KEY ("requested_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "translation_cache_created_idx" ON "translation_cache" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "translation_jobs_open_idx" ON "translation_jobs" USING btree ("created_at") WHERE "translation_jobs"."status" <> 'done';