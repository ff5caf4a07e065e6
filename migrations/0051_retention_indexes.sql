-- Indexes for the hourly retention of settled outbox messages and finished workflow runs
-- (services/outbox/retention.ts, services/workflows/run-retention.ts), which would otherwise read
-- both tables whole every hour. Partial on the rows the retention deletes: a pending message or an
-- open run is not in them, so the outbox's claims and retries do not write to the first. IF NOT
-- EXISTS: on large tables an operator builds them beforehand with CREATE INDEX CONCURRENTLY.
CREATE INDEX IF NOT EXISTS "outbox_settled_idx" ON "outbox_messages" USING btree (coalesce("last_attempt_at", "created_at")) WHERE "outbox_messages"."status" <> 'pending';--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "workflow_runs_finished_idx" ON "workflow_runs" USING btree ("finished_at") WHERE "workflow_runs"."status" in ('succeeded', 'failed', 'timed_out');