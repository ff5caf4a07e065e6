DROP INDEX "support_tickets_status_created_idx";--> statement-breakpoint
ALTER TABLE "support_tickets" ADD COLUMN "resolution_note" text;--> statement-breakpoint
CREATE INDEX "support_tickets_status_created_id_idx" ON "support_tickets" USING btree ("status","created_at","id");--> statement-breakpoint
CREATE INDEX "support_tickets_created_id_idx" ON "support_tickets" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "support_tickets_resolved_idx" ON "support_tickets" USING btree ("resolved_at") WHERE "support_tickets"."status" = 'resolved';