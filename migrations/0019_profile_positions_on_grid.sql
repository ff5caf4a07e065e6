-- Positions are kept on a 0.01° grid (about 1 km): the exact point a member sent is never stored,
-- so no distance shown to others can be worked back to it (profiles.ts snaps every new one).
UPDATE "profiles"
SET "latitude" = round("latitude"::numeric, 2)::double precision,
    "longitude" = round("longitude"::numeric, 2)::double precision
WHERE "latitude" IS NOT NULL OR "longitude" IS NOT NULL;
