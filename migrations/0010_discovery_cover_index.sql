-- The discovery feed's candidate scan, answered from the index: the position box selects the
-- entries and every column the filters and the scorer read is included, so the thousands of heap
-- pages a city's profiles are spread over are not visited (an index-only scan wherever the
-- visibility map is current). last_active_at is included: it changes only when a profile is
-- saved, so the index costs no extra writes on activity. Hand-written: drizzle cannot declare
-- INCLUDE columns.
CREATE INDEX "profiles_discovery_cover_idx" ON "profiles" USING btree ("latitude", "longitude")
  INCLUDE ("user_id", "gender", "birth_date", "age_min", "age_max", "max_distance_km", "interested_in", "interests", "last_active_at", "created_at")
  WHERE "visibility" = 'visible';
