-- One peer-to-peer transfer on plain tables, the database-only baseline of `npm run bench -- wallet`.
-- Tables (created by bench/wallet.ts): bench_accounts(id int primary key, balance bigint check >= 0)
-- with ids 1..:accounts, and bench_history(id bigserial, from_id, to_id, amount, created_at).
-- Variables: -D accounts=1000 (how many), -D hot=0 (random recipients) or -D hot=<id> (everyone pays <id>).
\set from random(1, :accounts)
\if :hot > 0
\set from random(1, :accounts - 1)
\set from :from + (case when :from >= :hot then 1 else 0 end)
\set to :hot
\else
\set to (:from + random(0, :accounts - 2)) % :accounts + 1
\endif
\set amount random(1, 5)
-- The two rows are locked in id order, as the API's ledger does, so transfers cannot deadlock.
\set lo least(:from, :to)
\set hi greatest(:from, :to)
\set lo_delta (case when :lo = :from then -:amount else :amount end)
\set hi_delta -:lo_delta
BEGIN;
UPDATE bench_accounts SET balance = balance + :lo_delta WHERE id = :lo;
UPDATE bench_accounts SET balance = balance + :hi_delta WHERE id = :hi;
INSERT INTO bench_history (from_id, to_id, amount) VALUES (:from, :to, :amount);
END;
