-- The feed keeps the 1,000 most recently active of the people who pass its filters. With the UTC day
-- of last activity in the key, between the cell and the birth date, the placed arm reads the recent
-- days' slice of each cell first and reads older days only when that slice holds fewer than 1,000
-- (services/discovery/candidates.ts); within a day the wished birth dates still bound the read.
-- Everyone in a newer day is more recently active than everyone in an older one, so the answers are
-- those of reading every day. Last activity is already in the index, so an activity update already
-- wrote an entry. Hand-written: drizzle cannot declare INCLUDE columns.
DROP INDEX "profiles_discovery_placed_idx";--> statement-breakpoint
CREATE INDEX "profiles_discovery_placed_idx" ON "profiles" USING btree ("gender", ((floor("latitude")::int + 90) * 361 + floor("longitude")::int + 180), (("last_active_at" AT TIME ZONE 'UTC')::date), "birth_date")
  INCLUDE ("latitude", "longitude", "age_min", "age_max", "max_distance_km", "last_active_at", "created_at", "user_id", "interested_in", "interests")
  WHERE "visibility" = 'visible' AND "latitude" IS NOT NULL AND "longitude" IS NOT NULL;
--> statement-breakpoint
-- The same-country arm (profiles without a position) reads this index alone: every column its
-- filters and the scorer read is included, as in the placed index, so it reads no table pages.
-- It replaces the drizzle-declared index of the same keys; hand-written for the same reason.
DROP INDEX "profiles_discovery_unplaced_idx";--> statement-breakpoint
CREATE INDEX "profiles_discovery_unplaced_idx" ON "profiles" USING btree ("country", "gender", "birth_date")
  INCLUDE ("latitude", "longitude", "age_min", "age_max", "max_distance_km", "last_active_at", "created_at", "user_id", "interested_in", "interests")
  WHERE "visibility" = 'visible' AND ("latitude" IS NULL OR "longitude" IS NULL);
