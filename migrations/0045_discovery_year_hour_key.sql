-- The placed arm of the feed's candidate scan asks for a list of birth years and reads, within each
-- cell and year, the people active in the last hour or two first, and older hours only when those
-- leave the candidate limit unfilled (services/discovery/candidates.ts). With the year as a key
-- before the time of activity, each (cell, year) is one range of recent entries, where a birth-date
-- range after the day of activity could not bound the read and every age's recent entries were
-- read and checked. The hour (UTC) replaces the day so that the first slice can be an hour or two
-- rather than two days. Birth date moves to the included columns: the years bound the read and
-- the exact dates are checked entry by entry. Hand-written: drizzle cannot declare INCLUDE columns.
DROP INDEX "profiles_discovery_placed_idx";--> statement-breakpoint
CREATE INDEX "profiles_discovery_placed_idx" ON "profiles" USING btree ("gender", ((floor("latitude")::int + 90) * 361 + floor("longitude")::int + 180), (extract(year from "birth_date")::int), date_trunc('hour', "last_active_at" AT TIME ZONE 'UTC'))
  INCLUDE ("birth_date", "latitude", "longitude", "age_min", "age_max", "max_distance_km", "last_active_at", "created_at", "user_id", "interested_in", "interests")
  WHERE "visibility" = 'visible' AND "latitude" IS NOT NULL AND "longitude" IS NOT NULL;
--> statement-breakpoint
-- The same-country arm (profiles without a position) is read the same way: by birth year, then in
-- slices of hours, with every column it reads included.
DROP INDEX "profiles_discovery_unplaced_idx";--> statement-breakpoint
CREATE INDEX "profiles_discovery_unplaced_idx" ON "profiles" USING btree ("country", "gender", (extract(year from "birth_date")::int), date_trunc('hour', "last_active_at" AT TIME ZONE 'UTC'))
  INCLUDE ("birth_date", "latitude", "longitude", "age_min", "age_max", "max_distance_km", "last_active_at", "created_at", "user_id", "interested_in", "interests")
  WHERE "visibility" = 'visible' AND ("latitude" IS NULL OR "longitude" IS NULL);
