-- Postgres compiles a table's CHECK expressions afresh for every INSERT or UPDATE statement it
-- runs, and a transfer runs five such statements: the transaction row, its postings, and the two
-- balance updates that ledger_apply_posting() makes. Those compilations were over a quarter of
-- the database's work on a transfer (counted in instructions). The checks that never concern a
-- balance now live in triggers that run only where they can fail; the one that guards money,
-- ledger_accounts_wallet_nonnegative, stays a CHECK. Errors keep the old constraint names.
ALTER TABLE "ledger_accounts" DROP CONSTRAINT "ledger_accounts_kind_check";--> statement-breakpoint
ALTER TABLE "ledger_accounts" DROP CONSTRAINT "ledger_accounts_wallet_owner_check";--> statement-breakpoint
ALTER TABLE "ledger_postings" DROP CONSTRAINT "ledger_postings_nonzero";--> statement-breakpoint
ALTER TABLE "ledger_transactions" DROP CONSTRAINT "ledger_transactions_type_check";--> statement-breakpoint
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
  RETURN NEW;
END;
$$;
--> statement-breakpoint
-- "UPDATE OF kind, user_id": a balance update names neither column, so it does not fire this.
CREATE TRIGGER ledger_accounts_shape BEFORE INSERT OR UPDATE OF kind, user_id ON ledger_accounts
  FOR EACH ROW EXECUTE FUNCTION ledger_check_account_shape();
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
BEGIN
  IF NEW.amount IS NULL OR NEW.amount = 0 THEN
    RAISE EXCEPTION 'a ledger posting moves a non-zero amount'
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_postings_nonzero';
  END IF;
  UPDATE ledger_accounts SET balance = balance + NEW.amount WHERE id = NEW.account_id
    RETURNING balance INTO NEW.balance_after;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'ledger account % does not exist', NEW.account_id USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NEW;
END;
$$;
