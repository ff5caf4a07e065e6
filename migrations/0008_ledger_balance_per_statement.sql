-- The balance rule, checked once per INSERT statement over all the rows it wrote (a transition
-- table), instead of once per posting row at commit: the ledger's writers always insert a
-- transaction's postings in one statement, and commit then has no per-row work left. The rule
-- is stricter than before: the postings one statement writes must balance per transaction.
DROP TRIGGER ledger_postings_balanced ON ledger_postings;
--> statement-breakpoint
DROP FUNCTION ledger_check_balanced();
--> statement-breakpoint
CREATE FUNCTION ledger_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  bad record;
BEGIN
  SELECT transaction_id, sum(amount) AS total INTO bad
    FROM new_postings GROUP BY transaction_id HAVING sum(amount) <> 0 LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger transaction % is unbalanced by %', bad.transaction_id, bad.total USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER ledger_postings_balanced AFTER INSERT ON ledger_postings
  REFERENCING NEW TABLE AS new_postings FOR EACH STATEMENT EXECUTE FUNCTION ledger_check_balanced();
