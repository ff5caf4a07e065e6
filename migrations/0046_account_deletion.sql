ALTER TABLE "users" ADD COLUMN "deleted_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "profile_hidden_by_deletion" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "erased_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "users_deleted_idx" ON "users" USING btree ("deleted_at") WHERE "users"."deleted_at" is not null;--> statement-breakpoint
-- An erased member's remaining coins go to the platform's forfeiture account, by a posting of
-- its own transaction type, so the ledger stays balanced and the amount stays accountable.
CREATE OR REPLACE FUNCTION ledger_check_account_shape() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.kind IS NULL OR NEW.kind NOT IN ('wallet', 'mint', 'subscription_revenue', 'forfeiture') THEN
    RAISE EXCEPTION 'ledger account kind % is unknown', NEW.kind
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_accounts_kind_check';
  END IF;
  IF (NEW.kind = 'wallet') <> (NEW.user_id IS NOT NULL) THEN
    RAISE EXCEPTION 'a wallet has an owner and a system account none'
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_accounts_wallet_owner_check';
  END IF;
  IF TG_OP = 'INSERT' AND (NEW.balance IS DISTINCT FROM 0 OR NEW.last_seq IS DISTINCT FROM 0) THEN
    RAISE EXCEPTION 'a ledger account starts at zero; coins arrive through postings' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
INSERT INTO ledger_accounts (id, kind) VALUES ('sys_forfeited', 'forfeiture') ON CONFLICT (id) DO NOTHING;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION ledger_check_transaction_shape() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.type IS NULL OR NEW.type NOT IN ('transfer', 'award', 'subscription', 'funding', 'voucher', 'forfeiture') THEN
    RAISE EXCEPTION 'ledger transaction type % is unknown', NEW.type
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_transactions_type_check';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
-- Transactions stay history, with one exception: erasing a member may point the actor at the
-- member's tombstone and drop the free-text note. Nothing that moves money can change.
CREATE FUNCTION ledger_transactions_anonymise_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE'
     AND NEW.id = OLD.id AND NEW.type = OLD.type AND NEW.created_at = OLD.created_at
     AND NEW.external_ref IS NOT DISTINCT FROM OLD.external_ref
     AND (NEW.note IS NULL OR NEW.note IS NOT DISTINCT FROM OLD.note)
     AND (NEW.actor_user_id IS NOT DISTINCT FROM OLD.actor_user_id OR NEW.actor_user_id LIKE 'tmb\_%')
  THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END;
$$;
--> statement-breakpoint
DROP TRIGGER ledger_transactions_immutable ON ledger_transactions;
--> statement-breakpoint
CREATE TRIGGER ledger_transactions_immutable BEFORE UPDATE OR DELETE ON ledger_transactions
  FOR EACH ROW EXECUTE FUNCTION ledger_transactions_anonymise_only();
--> statement-breakpoint
-- The starter knowledge base told members to contact support to delete their account; the
-- deletion and the export of one's data are self-service now. A new version replaces that section where the current version
-- still holds it word for word (a knowledge base its admins rewrote is left as they wrote it).
INSERT INTO kb_versions (content, created_by)
SELECT replace(content, '## Deleting your account
Contact support from your account to delete it. Deleting removes your profile from discovery and ends your matches. Coins left in your wallet are lost when the account is deleted.', '## Getting a copy of your data
You can download a copy of everything the platform keeps about you: choose Export my data in your account settings (up to 3 times a day). The copy is prepared in the background; when it is ready, download it within 24 hours. The download link works once. The copy holds your account, profile, preferences, swipes and winks you made, matches, blocks and reports you made, wallet history, payments, subscriptions, support tickets and partner details. It never shows reports others made about you.

## Deleting your account
You can delete your account yourself at any time, without contacting support: choose Delete account in your account settings and confirm by typing DELETE. Your profile disappears at once for everyone: from discovery, from your matches'' lists and from the winks you sent, and your sign-ins stop working. For 30 days you can change your mind: sign in and choose Restore account, and everything comes back as it was. After 30 days your account is erased for good: profile, photos, swipes, matches, winks, notifications, support tickets, partner profile and API keys. Coins left in your wallet are forfeited when the account is erased. Payment and wallet records are kept for accounting, without your name, email or phone number. Signing in again later with the same login starts a new, empty account.'), NULL
FROM kb_versions
WHERE version = (SELECT max(version) FROM kb_versions)
  AND strpos(content, '## Deleting your account
Contact support from your account to delete it. Deleting removes your profile from discovery and ends your matches. Coins left in your wallet are lost when the account is deleted.') > 0;
