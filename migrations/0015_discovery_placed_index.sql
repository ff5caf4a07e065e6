DROP INDEX "profiles_discovery_geo_idx";--> statement-breakpoint
-- The feed's candidates come in two arms (see services/discovery/feed.ts): placed profiles in the
-- position box, and same-country profiles without a position. The placed arm is answered from this
-- index alone: wished gender, then the latitude band, then longitude and the age window as index
-- conditions, with every column the filters and the scorer read included, so the heap pages a
-- city's profiles are spread over are not visited (an index-only scan wherever the visibility map
-- is current). It replaces the 0010 cover index, which a single OR-ed query never used, and the
-- gender/age/position index, whose matches all had to be read from the heap. Hand-written:
-- drizzle cannot declare INCLUDE columns.
DROP INDEX "profiles_discovery_cover_idx";--> statement-breakpoint
CREATE INDEX "profiles_discovery_placed_idx" ON "profiles" USING btree ("gender", "latitude", "longitude", "birth_date")
  INCLUDE ("user_id", "age_min", "age_max", "max_distance_km", "interested_in", "interests", "last_active_at", "created_at")
  WHERE "visibility" = 'visible' AND "latitude" IS NOT NULL AND "longitude" IS NOT NULL;
