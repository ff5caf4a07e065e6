-- ledger_transfer() refuses a transfer between two people when either has blocked the other,
-- in the same statement (no extra round trip); the rest of the function is as in 0007.
CREATE OR REPLACE FUNCTION ledger_transfer(
  p_txn_id text, p_from_user text, p_to_user text, p_amount bigint, p_note text, p_at timestamptz,
  p_new_from_wallet text, p_new_to_wallet text
) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_from text;
  v_to text;
  v_balance bigint;
BEGIN
  SELECT id INTO v_from FROM ledger_accounts WHERE user_id = p_from_user;
  SELECT id INTO v_to FROM ledger_accounts WHERE user_id = p_to_user;
  IF v_from IS NULL OR v_to IS NULL THEN
    -- First use of a wallet; a concurrent first use meets this one at the unique index, and an
    -- unknown user fails on the foreign key (the caller maps it to 404).
    INSERT INTO ledger_accounts (id, kind, user_id)
      VALUES (p_new_from_wallet, 'wallet', p_from_user), (p_new_to_wallet, 'wallet', p_to_user)
      ON CONFLICT (user_id) DO NOTHING;
    SELECT id INTO v_from FROM ledger_accounts WHERE user_id = p_from_user;
    SELECT id INTO v_to FROM ledger_accounts WHERE user_id = p_to_user;
  END IF;
  -- Two people of whom one blocked the other cannot reach each other with coins either: the
  -- transfer's note is a message. Answered like an unknown recipient (the caller maps it to 404).
  IF EXISTS (SELECT 1 FROM blocks WHERE (blocker_id = p_from_user AND blocked_id = p_to_user) OR (blocker_id = p_to_user AND blocked_id = p_from_user)) THEN
    RAISE EXCEPTION 'no such user' USING ERRCODE = 'foreign_key_violation';
  END IF;
  INSERT INTO ledger_transactions (id, type, note, actor_user_id, created_at)
    VALUES (p_txn_id, 'transfer', p_note, p_from_user, p_at);
  WITH posted AS (
    INSERT INTO ledger_postings (transaction_id, account_id, amount, balance_after, created_at)
      SELECT p_txn_id, v.account_id, v.amount, 0, p_at
      FROM (VALUES (v_from, -p_amount), (v_to, p_amount)) AS v(account_id, amount)
      ORDER BY v.account_id
      RETURNING account_id, balance_after)
  SELECT balance_after INTO v_balance FROM posted WHERE account_id = v_from;
  RETURN v_balance;
END;
$$;
