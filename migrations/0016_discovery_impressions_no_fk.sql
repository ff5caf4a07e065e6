-- Impressions are a soft per-day counter: the foreign key check on users (a row lock taken for
-- every new counter row) was about a third of a feed page's database time.
ALTER TABLE "profile_impressions" DROP CONSTRAINT "profile_impressions_user_id_users_id_fk";
