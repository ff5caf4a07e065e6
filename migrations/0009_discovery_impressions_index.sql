DROP INDEX "profiles_position_idx";--> statement-breakpoint
CREATE INDEX "profile_impressions_day_count_idx" ON "profile_impressions" USING btree ("day","count");