-- A profile's daily impression count now goes up once per viewer: the feed's counting statement
-- inserts (day, profile, viewer) here first and counts only the rows that are new. Counts already
-- made today stay as they are.
CREATE TABLE "profile_impression_viewers" (
	"day" date NOT NULL,
	"user_id" text NOT NULL,
	"viewer_id" text NOT NULL,
	CONSTRAINT "profile_impression_viewers_day_user_id_viewer_id_pk" PRIMARY KEY("day","user_id","viewer_id")
);
