-- A posting's account and transaction are checked by the ledger's own triggers instead of
-- foreign keys. Each foreign key ran a query and took a row lock per posting; the account is
-- already found and locked by ledger_apply_posting() (which refuses an unknown account), and the
-- statement trigger below finds the transactions once per statement. What the foreign keys also
-- gave, that a referenced row cannot go away, the delete and truncate refusals give: accounts and
-- transactions are permanent.
ALTER TABLE "ledger_postings" DROP CONSTRAINT "ledger_postings_transaction_id_ledger_transactions_id_fk";
--> statement-breakpoint
ALTER TABLE "ledger_postings" DROP CONSTRAINT "ledger_postings_account_id_ledger_accounts_id_fk";
--> statement-breakpoint
CREATE OR REPLACE FUNCTION ledger_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  bad record;
BEGIN
  SELECT transaction_id, sum(amount) AS total INTO bad
    FROM new_postings GROUP BY transaction_id HAVING sum(amount) <> 0 LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger transaction % is unbalanced by %', bad.transaction_id, bad.total USING ERRCODE = 'check_violation';
  END IF;
  -- A transaction row is never deleted (ledger_transactions_immutable), so one seen here stays.
  SELECT p.transaction_id INTO bad FROM new_postings p
    WHERE NOT EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.id = p.transaction_id) LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger transaction % does not exist', bad.transaction_id USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE FUNCTION ledger_refuse_removal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'rows of % are permanent', TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END;
$$;
--> statement-breakpoint
CREATE TRIGGER ledger_accounts_permanent BEFORE DELETE ON ledger_accounts
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_removal();
--> statement-breakpoint
CREATE TRIGGER ledger_accounts_no_truncate BEFORE TRUNCATE ON ledger_accounts
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_removal();
--> statement-breakpoint
CREATE TRIGGER ledger_transactions_no_truncate BEFORE TRUNCATE ON ledger_transactions
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_removal();
--> statement-breakpoint
CREATE TRIGGER ledger_postings_no_truncate BEFORE TRUNCATE ON ledger_postings
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_removal();
