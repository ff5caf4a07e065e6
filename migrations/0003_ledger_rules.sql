-- Rules of the ledger that the database itself enforces, whatever code writes to it.

-- A posting moves its account's balance in the same statement and records the result, so a
-- balance can never disagree with its postings; the wallet CHECK then refuses any overdraft.
CREATE FUNCTION ledger_apply_posting() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE ledger_accounts SET balance = balance + NEW.amount WHERE id = NEW.account_id
    RETURNING balance INTO NEW.balance_after;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'ledger account % does not exist', NEW.account_id USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER ledger_postings_apply BEFORE INSERT ON ledger_postings
  FOR EACH ROW EXECUTE FUNCTION ledger_apply_posting();
--> statement-breakpoint
-- Every transaction's postings sum to zero, checked at commit once all of them are in.
CREATE FUNCTION ledger_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  total bigint;
BEGIN
  SELECT coalesce(sum(amount), 0) INTO total FROM ledger_postings WHERE transaction_id = NEW.transaction_id;
  IF total <> 0 THEN
    RAISE EXCEPTION 'ledger transaction % is unbalanced by %', NEW.transaction_id, total USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER ledger_postings_balanced AFTER INSERT ON ledger_postings
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_balanced();
--> statement-breakpoint
-- Postings and transactions are history: corrections are new transactions, never edits.
CREATE FUNCTION ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END;
$$;
--> statement-breakpoint
CREATE TRIGGER ledger_postings_immutable BEFORE UPDATE OR DELETE ON ledger_postings
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
--> statement-breakpoint
CREATE TRIGGER ledger_transactions_immutable BEFORE UPDATE OR DELETE ON ledger_transactions
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
--> statement-breakpoint
INSERT INTO ledger_accounts (id, kind) VALUES ('sys_mint', 'mint'), ('sys_subscription_revenue', 'subscription_revenue');
--> statement-breakpoint
INSERT INTO plans (id, name, price_coins, period_days, description) VALUES
  ('standard', 'Standard', 0, 30, 'Free: discovery, swipes, matches and 10 winks a day.'),
  ('premium', 'Premium', 500, 30, 'Unlimited winks and five times the API and AI limits.'),
  ('enterprise', 'Enterprise', 2000, 30, 'Twenty times the API and AI limits, for partners and power users.');
