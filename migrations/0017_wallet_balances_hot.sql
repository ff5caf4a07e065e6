-- Balance updates become heap-only (HOT): with no index on balance, an update changes no indexed
-- column, and the free space fillfactor leaves on each page keeps the new row version there. A
-- transfer's two balance updates then touch no index and leave no dead index entries behind. The
-- leaderboard, the index's only reader, scans the wallets instead (its pages are cached for 30 s).
-- The new fillfactor applies to pages as they are written; VACUUM FULL would apply it at once.
DROP INDEX "ledger_accounts_wallet_balance_idx";--> statement-breakpoint
ALTER TABLE "ledger_accounts" SET (fillfactor = 70);
