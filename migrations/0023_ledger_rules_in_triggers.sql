-- Postgres compiles a table's CHECK expressions afresh for every INSERT or UPDATE statement it
-- runs, and a transfer runs five such statements: the transaction row, its postings, and the two
-- balance updates that ledger_apply_posting() makes. Those compilations were a quarter of the
-- database's work on a transfer, and the actor's foreign key, which locked the sender's users
-- row, another twentieth (counted in instructions: 859k per transfer before, 638k after).
--
-- 1. The rules that never concern a balance (an account's kind, a wallet having an owner and a
--    system account none, a transaction's type, a non-zero posting) are triggers that run only
--    where they can fail. Errors keep the old constraint names.
-- 2. A wallet's balance cannot go below zero: ledger_apply_posting() checks the row its UPDATE
--    returns, as ledger_accounts_wallet_nonnegative. So that nothing goes around that check, a
--    balance moves only through a posting: any other update of it, and a new account that does
--    not start at zero, are refused. "A balance is the sum of its postings" is now a rule the
--    database keeps, not a convention.
-- 3. ledger_transactions.actor_user_id is no longer a foreign key. Users are never deleted, and
--    every code path that writes a transaction takes the actor from a signed-in person.
ALTER TABLE "ledger_accounts" DROP CONSTRAINT "ledger_accounts_kind_check";--> statement-breakpoint
ALTER TABLE "ledger_accounts" DROP CONSTRAINT "ledger_accounts_wallet_owner_check";--> statement-breakpoint
ALTER TABLE "ledger_accounts" DROP CONSTRAINT "ledger_accounts_wallet_nonnegative";--> statement-breakpoint
ALTER TABLE "ledger_postings" DROP CONSTRAINT "ledger_postings_nonzero";--> statement-breakpoint
ALTER TABLE "ledger_transactions" DROP CONSTRAINT "ledger_transactions_type_check";--> statement-breakpoint
ALTER TABLE "ledger_transactions" DROP CONSTRAINT "ledger_transactions_actor_user_id_users_id_fk";--> statement-breakpoint
CREATE FUNCTION ledger_check_account_shape() RETURNS trigger LANGUAGE plpgsql AS $$
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
--> statement-breakpoint
-- "UPDATE OF kind, user_id": a balance update names neither column, so it does not fire this.
CREATE TRIGGER ledger_accounts_shape BEFORE INSERT OR UPDATE OF kind, user_id ON ledger_accounts
  FOR EACH ROW EXECUTE FUNCTION ledger_check_account_shape();
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
CREATE FUNCTION ledger_check_transaction_shape() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.type IS NULL OR NEW.type NOT IN ('transfer', 'award', 'subscription', 'funding') THEN
    RAISE EXCEPTION 'ledger transaction type % is unknown', NEW.type
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_transactions_type_check';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
-- Inserts only: ledger_transactions_immutable refuses every update.
CREATE TRIGGER ledger_transactions_shape BEFORE INSERT ON ledger_transactions
  FOR EACH ROW EXECUTE FUNCTION ledger_check_transaction_shape();
--> statement-breakpoint
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
