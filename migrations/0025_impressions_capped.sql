-- Every card the feed serves bumps its profile's count for the day. With count indexed (the old
-- profile_impressions_day_count_idx, there so the candidate scan could find the day's capped
-- profiles), every bump wrote a new row version and two index entries. Without it, a bump is an
-- in-place (HOT) update, and free space left on each page keeps it on the same page. The feed's
-- counting statement lists a profile here when its count reaches the cap, and the candidate scan
-- reads this table instead.
CREATE TABLE "profile_impressions_capped" (
	"day" date NOT NULL,
	"user_id" text NOT NULL,
	CONSTRAINT "profile_impressions_capped_day_user_id_pk" PRIMARY KEY("day","user_id")
);
--> statement-breakpoint
-- Profiles already at the cap (200 cards a day) today or yesterday: the UTC day the feed counts
-- in may differ from the database server's current_date.
INSERT INTO "profile_impressions_capped" ("day", "user_id")
  SELECT "day", "user_id" FROM "profile_impressions" WHERE "day" >= current_date - 1 AND "count" >= 200;
--> statement-breakpoint
DROP INDEX "profile_impressions_day_count_idx";
--> statement-breakpoint
ALTER TABLE "profile_impressions" SET (fillfactor = 70);
