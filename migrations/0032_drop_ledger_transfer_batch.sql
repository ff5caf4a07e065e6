-- Transfers are one statement each again, without the process-wide batcher: against one
-- transaction per transfer on a production-shaped workload (HTTP through the server, keyed and
-- unkeyed transfers, 16 and 64 clients) it was slower at 16 clients and level at 64 once the
-- connection pool fits the concurrency (docs/design/performance.md, "Transfer batcher"), and it
-- was a second path for money beside keyed transfers.
--
-- ledger_transfer() (migrations 0007 and 0021), which 0030 kept for a rolling deploy and meant a
-- later migration to drop, is the transfer function once more: the API calls it again, so it stays.
-- It now waits at most 2 s for a wallet another transaction holds (lock_timeout, SQLSTATE 55P03,
-- answered 503 with Retry-After), as ledger_transfer_batch() did, so a busy wallet ties up a pooled
-- connection for a bounded time.
--
-- ledger_transfer_batch() goes. Instances of the release that called it fail their transfers
-- (500, nothing moves) from this migration until they are replaced: stop them before the new
-- release starts, rather than running the two side by side.
ALTER FUNCTION ledger_transfer(text, text, text, bigint, text, timestamptz, text, text) SET lock_timeout = '2s';
--> statement-breakpoint
DROP FUNCTION ledger_transfer_batch(jsonb);
