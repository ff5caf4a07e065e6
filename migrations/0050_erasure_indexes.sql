-- Indexes for what the account erasure and export look up by member (services/account/erasure.ts,
-- export-document.ts), each of which read its whole table before; docs/design/account-export.md.
-- Built like every index here, inside the migration's transaction (CONCURRENTLY cannot run in
-- one): each blocks writes to its table while it builds, 3.3 s in all on the test machine with
-- 1M winks, 1M outbox messages (half of them run hand-overs), 1M vouchers, 500k workflow runs,
-- 100k tickets and 50k video requests; the longest, 1.2 s, on workflow_runs. IF NOT EXISTS: on
-- large tables an operator builds them beforehand with CREATE INDEX CONCURRENTLY (README, Deploying).
CREATE INDEX IF NOT EXISTS "winks_match_idx" ON "winks" USING btree ("match_id") WHERE "winks"."match_id" is not null;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "outbox_workflow_run_idx" ON "outbox_messages" USING btree ((("body"::jsonb)->'data'->>'runId')) WHERE "outbox_messages"."kind" = 'workflow.run';--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "support_video_user_idx" ON "support_video_requests" USING btree ("user_id","id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "support_video_filed_by_idx" ON "support_video_requests" USING btree ("filed_by") WHERE "support_video_requests"."filed_by" is not null;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "support_tickets_user_idx" ON "support_tickets" USING btree ("user_id","id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "support_tickets_resolved_by_idx" ON "support_tickets" USING btree ("resolved_by") WHERE "support_tickets"."resolved_by" is not null;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "vouchers_redeemed_by_idx" ON "vouchers" USING btree ("redeemed_by","id") WHERE "vouchers"."redeemed_by" is not null;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "workflow_runs_member_idx" ON "workflow_runs" USING btree (("input"->>'userId'));--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "workflow_runs_created_by_idx" ON "workflow_runs" USING btree ("created_by") WHERE "workflow_runs"."created_by" is not null;