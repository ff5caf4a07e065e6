-- Each posting gets its place in its account, `seq` (1, 2, 3, … per account, no gaps), assigned
-- by the posting trigger in the same UPDATE that moves the balance: under the account's row lock,
-- so seq is the order the balance moved in, and a posting's balance_after is its predecessor's
-- plus its amount. The posting id is drawn before the posting waits for that lock, so under
-- concurrency id order is not balance order, and a transaction that drew a lower id can commit
-- after one with a higher id (a reader paging by id skipped it). A posting with seq n commits
-- after the one with n - 1 (it waited for that transaction's lock), so whatever a reader sees of
-- an account is always its postings 1..k: history is ordered and paged by seq.
--
-- Existing postings are numbered in id order, the order history showed them in until now.
-- ledger_accounts.last_seq is the account's newest seq; like the balance it moves only through a
-- posting and starts at zero.
ALTER TABLE "ledger_accounts" ADD COLUMN "last_seq" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "ledger_postings" ADD COLUMN "seq" bigint;--> statement-breakpoint
ALTER TABLE "ledger_postings" DISABLE TRIGGER "ledger_postings_immutable";--> statement-breakpoint
UPDATE "ledger_postings" p SET "seq" = n.seq
  FROM (SELECT id, row_number() OVER (PARTITION BY account_id ORDER BY id) AS seq FROM "ledger_postings") n
  WHERE n.id = p.id;--> statement-breakpoint
ALTER TABLE "ledger_postings" ENABLE TRIGGER "ledger_postings_immutable";--> statement-breakpoint
ALTER TABLE "ledger_postings" ALTER COLUMN "seq" SET NOT NULL;--> statement-breakpoint
UPDATE "ledger_accounts" a SET "last_seq" = c.n
  FROM (SELECT account_id, count(*) AS n FROM "ledger_postings" GROUP BY account_id) c
  WHERE c.account_id = a.id;--> statement-breakpoint
DROP INDEX "ledger_postings_account_idx";--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_postings_account_seq_idx" ON "ledger_postings" USING btree ("account_id","seq");--> statement-breakpoint
CREATE OR REPLACE FUNCTION ledger_apply_posting() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_kind text;
BEGIN
  IF NEW.amount IS NULL OR NEW.amount = 0 THEN
    RAISE EXCEPTION 'a ledger posting moves a non-zero amount'
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_postings_nonzero';
  END IF;
  UPDATE ledger_accounts SET balance = balance + NEW.amount, last_seq = last_seq + 1 WHERE id = NEW.account_id
    RETURNING balance, last_seq, kind INTO NEW.balance_after, NEW.seq, v_kind;
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
  IF TG_OP = 'INSERT' AND (NEW.balance IS DISTINCT FROM 0 OR NEW.last_seq IS DISTINCT FROM 0) THEN
    RAISE EXCEPTION 'a ledger account starts at zero; coins arrive through postings' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
DROP TRIGGER "ledger_accounts_balance_by_posting" ON "ledger_accounts";--> statement-breakpoint
CREATE TRIGGER ledger_accounts_balance_by_posting BEFORE UPDATE OF balance, last_seq ON ledger_accounts
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_balance_write();
