-- The feed's placed arm reads this index by one-degree cell (services/discovery/geo-cells.ts):
-- wished gender, then each cell of the position box, then the wished birth dates inside it, so it
-- visits only people near enough and of the right age. The 0015 index it replaces bounded the scan
-- by latitude alone: a box read every profile in its latitude band around the globe (for Munich
-- that took in Paris) and checked longitude and age entry by entry, five times the entries read.
-- The cell is an expression rather than a column, so adding it rewrites no table; latitude and
-- longitude are included, which lets the planner answer from the index alone. Fixed-width
-- included columns come first. Hand-written: drizzle cannot declare INCLUDE columns.
DROP INDEX "profiles_discovery_placed_idx";--> statement-breakpoint
CREATE INDEX "profiles_discovery_placed_idx" ON "profiles" USING btree ("gender", ((floor("latitude")::int + 90) * 361 + floor("longitude")::int + 180), "birth_date")
  INCLUDE ("latitude", "longitude", "age_min", "age_max", "max_distance_km", "last_active_at", "created_at", "user_id", "interested_in", "interests")
  WHERE "visibility" = 'visible' AND "latitude" IS NOT NULL AND "longitude" IS NOT NULL;
