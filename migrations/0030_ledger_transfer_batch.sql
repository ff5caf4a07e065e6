-- Transfers are posted in batches: the ones that arrive while earlier ones are in the database go
-- together as one call of ledger_transfer_batch(), so a batch costs one round trip and one commit
-- (group commit). A batch ends exactly as the same transfers made one by one in array order would.
--
-- The expected refusals are answered per item instead of raised, so one refused transfer does not
-- undo the others in its batch: 'not_found' (the recipient does not exist, or one of the two people
-- blocked the other) and 'insufficient_funds'. Anything else raises and rolls the whole batch back;
-- the caller then tries each transfer alone.
--
-- How: the batch is played out on the wallets' current balances, then all accepted transfers are
-- written with one INSERT of transactions and one of postings. The postings are inserted in
-- account-id order (and in item order within an account), so the posting trigger locks wallets in
-- account-id order, the order of every other ledger write: a batch cannot deadlock with another
-- batch or a single posting. Each account's postings keep the items' order, so every balance_after
-- is the balance the one-by-one run would have left. The balances were read without a lock: should
-- another transaction spend from a wallet in between, the posting trigger's overdraft check (the
-- database's own guard) refuses the statement and the caller tries each transfer alone.
--
-- ledger_transfer() (migrations 0007 and 0021) is no longer called by this release. It stays for
-- instances of the previous release while a rolling deploy replaces them; a later migration drops it.
-- The function's statements take arrays, so Postgres would plan them afresh on every call (a
-- plan for the given array costs less on paper than the generic one); planning was a fifth of a
-- batch's time. Their generic plans are the index lookups wanted anyway.
--
-- A process sends one batch at a time, so a batch waiting for a wallet that another transaction
-- holds would hold up every transfer behind it. It waits at most 2 s (lock_timeout, SQLSTATE
-- 55P03); the caller then tries each transfer alone, and only the one that needs the busy wallet
-- is answered "try again".
CREATE FUNCTION ledger_transfer_batch(p_items jsonb)
  RETURNS TABLE (transfer_id text, sender_balance bigint, refusal text) LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan
  SET lock_timeout = '2s' AS $$
DECLARE
  v_ids text[];
  v_from text[];
  v_to text[];
  v_amount bigint[];
  v_note text[];
  v_at timestamptz[];
  v_wallet text[];
  v_n int;
  -- The wallets of everyone in the batch: owner, account id, balance as the batch plays out.
  w_user text[];
  w_id text[];
  w_balance bigint[];
  v_blocked boolean[];
  v_refusal text[];
  v_from_acct text[];
  v_to_acct text[];
  s int;
  r int;
  v_posted_ids text[];
  v_posted_balance bigint[];
BEGIN
  SELECT array_agg(e->>'id' ORDER BY n), array_agg(e->>'from' ORDER BY n), array_agg(e->>'to' ORDER BY n),
         array_agg((e->>'amount')::bigint ORDER BY n), array_agg(e->>'note' ORDER BY n),
         array_agg((e->>'at')::timestamptz ORDER BY n), array_agg(e->>'wallet' ORDER BY n)
    INTO v_ids, v_from, v_to, v_amount, v_note, v_at, v_wallet
    FROM jsonb_array_elements(p_items) WITH ORDINALITY AS x(e, n);
  v_n := coalesce(array_length(v_ids, 1), 0);
  FOR i IN 1 .. v_n LOOP
    IF v_ids[i] IS NULL OR v_amount[i] IS NULL OR v_amount[i] <= 0 OR v_from[i] IS NULL OR v_to[i] IS NULL
       OR v_from[i] = v_to[i] OR v_at[i] IS NULL OR v_wallet[i] IS NULL THEN
      RAISE EXCEPTION 'malformed transfer %', i USING ERRCODE = 'invalid_parameter_value';
    END IF;
  END LOOP;

  SELECT array_agg(a.user_id), array_agg(a.id), array_agg(a.balance) INTO w_user, w_id, w_balance
    FROM (SELECT DISTINCT unnest(v_from || v_to)) AS u(user_id) JOIN ledger_accounts a ON a.user_id = u.user_id;
  w_user := coalesce(w_user, '{}');
  IF NOT v_to <@ w_user THEN
    -- First use of a recipient's wallet; a concurrent first use meets this one at the unique index.
    INSERT INTO ledger_accounts (id, kind, user_id)
      SELECT DISTINCT ON (t.user_id) t.wallet, 'wallet', t.user_id
      FROM unnest(v_to, v_wallet) AS t(user_id, wallet)
      WHERE t.user_id <> ALL (w_user) AND EXISTS (SELECT 1 FROM users u WHERE u.id = t.user_id)
      ORDER BY t.user_id
      ON CONFLICT (user_id) DO NOTHING;
    SELECT array_agg(a.user_id), array_agg(a.id), array_agg(a.balance) INTO w_user, w_id, w_balance
      FROM (SELECT DISTINCT unnest(v_from || v_to)) AS u(user_id) JOIN ledger_accounts a ON a.user_id = u.user_id;
    w_user := coalesce(w_user, '{}');
  END IF;
  -- Someone who blocked the sender, or whom the sender blocked, cannot be reached with coins
  -- either (a transfer's note is a message): answered like an unknown recipient.
  SELECT array_agg(EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = v_from[i] AND b.blocked_id = v_to[i])
                   OR EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = v_to[i] AND b.blocked_id = v_from[i]) ORDER BY i)
    INTO v_blocked FROM generate_series(1, v_n) AS i;

  v_refusal := array_fill(NULL::text, ARRAY[v_n]);
  v_from_acct := array_fill(NULL::text, ARRAY[v_n]);
  v_to_acct := array_fill(NULL::text, ARRAY[v_n]);
  FOR i IN 1 .. v_n LOOP
    s := array_position(w_user, v_from[i]);
    r := array_position(w_user, v_to[i]);
    IF r IS NULL OR v_blocked[i] THEN
      v_refusal[i] := 'not_found';
    ELSIF s IS NULL OR w_balance[s] < v_amount[i] THEN
      -- A sender without a wallet has never held a coin.
      v_refusal[i] := 'insufficient_funds';
    ELSE
      v_from_acct[i] := w_id[s];
      v_to_acct[i] := w_id[r];
      w_balance[s] := w_balance[s] - v_amount[i];
      w_balance[r] := w_balance[r] + v_amount[i];
    END IF;
  END LOOP;

  INSERT INTO ledger_transactions (id, type, note, actor_user_id, created_at)
    SELECT v_ids[i], 'transfer', v_note[i], v_from[i], v_at[i]
    FROM generate_series(1, v_n) AS i WHERE v_from_acct[i] IS NOT NULL;
  -- The sender's posting is the negative one: its balance_after is the sender's balance.
  WITH posted AS (
    INSERT INTO ledger_postings (transaction_id, account_id, amount, balance_after, created_at)
      SELECT v_ids[p.i], p.account_id, p.amount, 0, v_at[p.i]
      FROM (SELECT i, v_from_acct[i] AS account_id, -v_amount[i] AS amount FROM generate_series(1, v_n) AS i WHERE v_from_acct[i] IS NOT NULL
            UNION ALL
            SELECT i, v_to_acct[i], v_amount[i] FROM generate_series(1, v_n) AS i WHERE v_from_acct[i] IS NOT NULL) AS p
      ORDER BY p.account_id, p.i
      RETURNING transaction_id, amount, balance_after)
  SELECT coalesce(array_agg(posted.transaction_id), '{}'), coalesce(array_agg(posted.balance_after), '{}')
    INTO v_posted_ids, v_posted_balance FROM posted WHERE posted.amount < 0;

  FOR i IN 1 .. v_n LOOP
    transfer_id := v_ids[i];
    refusal := v_refusal[i];
    sender_balance := CASE WHEN refusal IS NULL THEN v_posted_balance[array_position(v_posted_ids, v_ids[i])] END;
    RETURN NEXT;
  END LOOP;
END;
$$;
