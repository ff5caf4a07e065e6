CREATE TABLE "finance_ledger_days" (
	"day" date NOT NULL,
	"type" text NOT NULL,
	"transactions" bigint NOT NULL,
	"minted" bigint NOT NULL,
	"revenue" bigint NOT NULL,
	"credited" bigint NOT NULL,
	"unbalanced" bigint NOT NULL,
	"computed_at" timestamp with time zone NOT NULL,
	CONSTRAINT "finance_ledger_days_day_type_pk" PRIMARY KEY("day","type")
);
--> statement-breakpoint
CREATE TABLE "subscription_charges" (
	"transaction_id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"plan_id" text NOT NULL,
	"coins" bigint NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "subscription_charges" ADD CONSTRAINT "subscription_charges_plan_id_plans_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."plans"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "subscription_charges_created_idx" ON "subscription_charges" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "ledger_transactions_created_idx" ON "ledger_transactions" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "ledger_transactions_funding_idx" ON "ledger_transactions" USING btree ("created_at","id") WHERE "ledger_transactions"."type" = 'funding';--> statement-breakpoint
CREATE INDEX "payments_created_idx" ON "payments" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "payments_completed_idx" ON "payments" USING btree ("completed_at") WHERE "payments"."status" = 'completed';--> statement-breakpoint
-- Subscription payments made before this table: their note names the plan ("<plan name> plan, <n> days").
INSERT INTO "subscription_charges" ("transaction_id", "user_id", "plan_id", "coins", "created_at")
SELECT t."id", t."actor_user_id", pl."id", p."amount", t."created_at"
FROM "ledger_transactions" t
JOIN "ledger_postings" p ON p."transaction_id" = t."id" AND p."account_id" = 'sys_subscription_revenue'
JOIN "plans" pl ON t."note" LIKE pl."name" || ' plan,%'
WHERE t."type" = 'subscription' AND t."actor_user_id" IS NOT NULL
ON CONFLICT DO NOTHING;
--> statement-breakpoint
CREATE INDEX "subscription_charges_user_idx" ON "subscription_charges" USING btree ("user_id","transaction_id");