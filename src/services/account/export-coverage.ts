/**
 * Every column that refers to a member (a foreign key to users, a `user_id` / `*_user_id` name, or a
 * `*_by` name), and where the export puts what it holds, or why it is left out. The coverage test
 * (test/integration/account-export-coverage.test.ts) reads such columns from information_schema
 * and fails on any not listed here, so a table added later is either exported or excluded with a
 * reason before it ships. docs/api/account.md lists the same exclusions for members.
 */
export type Coverage = { section: string } | { excluded: string };

const STAFF = "staff work record: what the person did as an admin or support agent, not data about them as a member";

export const EXPORT_COVERAGE: Record<string, Coverage> = {
  "users.id": { section: "account" },
  "profiles.user_id": { section: "profile, photos, preferences" },
  "swipes.swiper_id": { section: "swipes" },
  "swipes.target_id": { excluded: "others' swipes on the member: their private choices (mutual likes show as matches)" },
  "winks.sender_id": { section: "winksSent" },
  "winks.recipient_id": { excluded: "winks others sent: the sender's words, shown to the member in the app's inbox" },
  "wink_daily_counts.user_id": { excluded: "today's count for the daily wink cap; the winks themselves are in winksSent" },
  "matches.user_low": { section: "matches" },
  "matches.user_high": { section: "matches" },
  "matches.unmatched_by": { section: "matches (unmatchedByMe)" },
  "blocks.blocker_id": { section: "blocks" },
  "blocks.blocked_id": { excluded: "blocks others made against the member: telling them would undo the protection" },
  "reports.reporter_id": { section: "reportsMade" },
  "reports.reported_id": { excluded: "reports about the member protect the reporter and are never shown to them" },
  "events.user_id": { excluded: "notification copies of matches and winks, already in those sections; pruned after EVENT_RETENTION_DAYS" },
  "ledger_accounts.user_id": { section: "wallet" },
  "ledger_transactions.actor_user_id": { section: "wallet.history (the member's own movements, through their wallet's postings)" },
  "payments.user_id": { section: "payments" },
  "subscriptions.user_id": { section: "subscriptions" },
  "subscription_charges.user_id": { section: "subscriptionCharges" },
  "vouchers.redeemed_by": { section: "vouchersRedeemed" },
  "support_tickets.user_id": { section: "support.tickets (with the answer each came from)" },
  "support_tickets.resolved_by": { excluded: STAFF },
  "support_video_requests.user_id": { section: "support.videoRequests" },
  "support_video_requests.filed_by": { excluded: STAFF },
  "partners.user_id": { section: "partner" },
  "partners.reviewed_by": { excluded: STAFF },
  "api_keys.created_by": { section: "apiKeys (metadata only, never the key or its hash)" },
  "idempotency_keys.user_id": { excluded: "replay records of the member's own requests, kept 48 hours so a retry is not applied twice" },
  "profile_impressions.user_id": { excluded: "feed counters (how often the profile was shown today), kept two days" },
  "profile_impression_viewers.user_id": { excluded: "feed counters (who was shown the profile today), kept two days" },
  "profile_impression_viewers.viewer_id": { excluded: "feed counters (whose feeds showed a profile today), kept two days" },
  "profile_impressions_capped.user_id": { excluded: "feed counters (profiles at today's display cap), kept two days" },
  "account_exports.user_id": { excluded: "the export requests themselves, shown by GET /api/v1/account/exports/{exportId}" },
  "admin_audit_log.actor_user_id": { excluded: STAFF },
  "kb_versions.created_by": { excluded: STAFF },
  "kb_assets.created_by": { excluded: STAFF },
  "translation_jobs.requested_by": { excluded: STAFF },
  "messaging_workflows.created_by": { excluded: STAFF },
  "workflow_runs.created_by": { excluded: STAFF },
  "voucher_batches.created_by": { excluded: STAFF },
  "config_documents.updated_by": { excluded: STAFF },
};
