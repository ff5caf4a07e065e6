-- The rest of what 0023 began, and the two largest costs it left on a transfer (counted in
-- instructions: 710k before, 635k after).
--
-- 1. A wallet's balance cannot go below zero: checked by ledger_apply_posting() on the row its
--    UPDATE returns, instead of by a CHECK compiled for each of the transfer's two updates. So
--    that nothing goes around that check, a balance now moves only through a posting: any other
--    update of it, and a new account that does not start at zero, are refused. This also makes
--    "a balance is the sum of its postings" a rule the database keeps, not a convention.
-- 2. ledger_transactions.actor_user_id is no longer a foreign key. Its check locked the actor's
--    users row on every transfer (a write to the users table, and a WAL record). Users are
--    never deleted, and every code path that writes a transaction takes the actor from a
--    signed-in person.
ALTER TABLE "ledger_accounts" DROP CONSTRAINT "ledger_accounts_wallet_nonnegative";--> statement-breakpoint
ALTER TABLE "ledger_transactions" DROP CONSTRAINT "ledger_transactions_actor_user_id_users_id_fk";--> statement-breakpoint
CREATE OR REPLACE FUNCTION ledger_apply_posting() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_kind text;
BEGIN
  IF NEW.amount IS NULL OR NEW.amount = 0 THEN
    RAISE EXCEPTION 'a ledger posting moves a non-zero amount'
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_postings_nonzero';
  END IF;
  UPDATE ledger_accounts SET balance = balance + NEW.amount WHERE id = NEW.account_id
    RETURNING balance, kind INTO NEW.balance_after, v_kind;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'ledger account % does not exist', NEW.account_id USING ERRCODE = 'foreign_key_violation';
  END IF;
  IF NEW.balance_after < 0 AND v_kind = 'wallet' THEN
    RAISE EXCEPTION 'wallet % would go below zero', NEW.account_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_accounts_wallet_nonnegative';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
-- The balance update inside ledger_apply_posting() runs at trigger depth 2 (a trigger's own
-- statement); an UPDATE sent by a client runs at depth 1.
CREATE FUNCTION ledger_refuse_balance_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF pg_trigger_depth() < 2 THEN
    RAISE EXCEPTION 'a ledger balance moves only through a posting' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER ledger_accounts_balance_by_posting BEFORE UPDATE OF balance ON ledger_accounts
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_balance_write();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION ledger_check_account_shape() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.kind IS NULL OR NEW.kind NOT IN ('wallet', 'mint', 'subscription_revenue') THEN
    RAISE EXCEPTION 'ledger account kind % is unknown', NEW.kind
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_accounts_kind_check';
  END IF;
  IF (NEW.kind = 'wallet') <> (NEW.user_id IS NOT NULL) THEN
    RAISE EXCEPTION 'a wallet has an owner and a system account none'
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_accounts_wallet_owner_check';
  END IF;
  IF TG_OP = 'INSERT' AND NEW.balance IS DISTINCT FROM 0 THEN
    RAISE EXCEPTION 'a ledger account starts at zero; coins arrive through postings' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
