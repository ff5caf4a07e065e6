/**
 * Every column that refers to a member (a foreign key to users, a `user_id` / `*_user_id` name, or a
 * `*_by` name): where the export puts what it holds or why it is left out, and what the erasure
 * does with it. Two tests read such columns from information_schema and fail on any not listed
 * here, test/integration/account-export-coverage.test.ts and test/integration/account-erasure.test.ts,
 * and an entry cannot name one without the other, so a table added later is neither exported nor
 * left behind at erasure by oversight. docs/api/account.md lists the exclusions for members.
 */
export type Coverage = { section: string } | { excluded: string };

/**
 * `delete`: the row goes with the member (services/account/erasure.ts deletes table by table in
 * the order of this list, which puts winks before the matches they reference). `tombstone`: the
 * row stays, pointed at the member's tombstone. `other`: how the erasure deals with it instead.
 */
export type Erasure = "delete" | "tombstone" | { other: string };

const STAFF = "staff work record: what the person did as an admin or support agent, not data about them as a member";

export const MEMBER_COLUMNS: Record<string, { export: Coverage; erasure: Erasure }> = {
  "users.id": { export: { section: "account" }, erasure: { other: "the row itself, deleted last, once a tombstone row has taken its place in what is kept" } },
  "profiles.user_id": { export: { section: "profile, photos, preferences" }, erasure: "delete" },
  "swipes.swiper_id": { export: { section: "swipes" }, erasure: "delete" },
  "swipes.target_id": { export: { excluded: "others' swipes on the member: their private choices (mutual likes show as matches)" }, erasure: "delete" },
  "winks.sender_id": { export: { section: "winksSent" }, erasure: "delete" },
  "winks.recipient_id": { export: { excluded: "winks others sent: the sender's words, shown to the member in the app's inbox" }, erasure: "delete" },
  "wink_daily_counts.user_id": { export: { excluded: "today's count for the daily wink cap; the winks themselves are in winksSent" }, erasure: "delete" },
  "matches.user_low": { export: { section: "matches" }, erasure: "delete" },
  "matches.user_high": { export: { section: "matches" }, erasure: "delete" },
  // Not a delete condition of its own: matches has no index on it, and the rows are found anyway.
  "matches.unmatched_by": { export: { section: "matches (unmatchedByMe)" }, erasure: { other: "always user_low or user_high, so the match is deleted through them" } },
  "blocks.blocker_id": { export: { section: "blocks" }, erasure: "delete" },
  "blocks.blocked_id": { export: { excluded: "blocks others made against the member: telling them would undo the protection" }, erasure: "delete" },
  "reports.reporter_id": { export: { section: "reportsMade" }, erasure: "delete" },
  "reports.reported_id": { export: { excluded: "reports about the member protect the reporter and are never shown to them" }, erasure: "delete" },
  "events.user_id": { export: { excluded: "notification copies of matches and winks, already in those sections; pruned after EVENT_RETENTION_DAYS" }, erasure: "delete" },
  "ledger_accounts.user_id": { export: { section: "wallet" }, erasure: "tombstone" },
  "ledger_transactions.actor_user_id": { export: { section: "wallet.history (the member's own movements, through their wallet's postings)" }, erasure: "tombstone" },
  "payments.user_id": { export: { section: "payments" }, erasure: "tombstone" },
  "subscriptions.user_id": { export: { section: "subscriptions" }, erasure: "delete" },
  "subscription_charges.user_id": { export: { section: "subscriptionCharges" }, erasure: "tombstone" },
  "vouchers.redeemed_by": { export: { section: "vouchersRedeemed" }, erasure: "tombstone" },
  "support_tickets.user_id": { export: { section: "support.tickets (with the answer each came from)" }, erasure: "delete" },
  "support_tickets.resolved_by": { export: { excluded: STAFF }, erasure: "tombstone" },
  "support_video_requests.user_id": { export: { section: "support.videoRequests" }, erasure: "delete" },
  "support_video_requests.filed_by": { export: { excluded: STAFF }, erasure: "tombstone" },
  "partners.user_id": { export: { section: "partner" }, erasure: "delete" },
  "partners.reviewed_by": { export: { excluded: STAFF }, erasure: "tombstone" },
  "api_keys.created_by": { export: { section: "apiKeys (metadata only, never the key or its hash)" }, erasure: "delete" },
  "idempotency_keys.user_id": { export: { excluded: "replay records of the member's own requests, kept 48 hours so a retry is not applied twice" }, erasure: "delete" },
  "profile_impressions.user_id": { export: { excluded: "feed counters (how often the profile was shown today), kept two days" }, erasure: "delete" },
  "profile_impression_viewers.user_id": { export: { excluded: "feed counters (who was shown the profile today), kept two days" }, erasure: "delete" },
  "profile_impression_viewers.viewer_id": { export: { excluded: "feed counters (whose feeds showed a profile today), kept two days" }, erasure: "delete" },
  "profile_impressions_capped.user_id": { export: { excluded: "feed counters (profiles at today's display cap), kept two days" }, erasure: "delete" },
  "account_exports.user_id": { export: { excluded: "the export requests themselves, shown by GET /api/v1/account/exports/{exportId}" }, erasure: "delete" },
  "admin_audit_log.actor_user_id": { export: { excluded: STAFF }, erasure: "tombstone" },
  // No index on the staff columns of kb_versions, kb_assets, translation_jobs,
  // messaging_workflows, voucher_batches, config_documents and partners: the erasure reads each of
  // these tables whole, in its update and in the foreign key check (if any) as the user row goes.
  // They hold what staff wrote or reviewed and stay small (hundreds to a few thousand rows), so a
  // scan takes milliseconds: 6 ms for 10,000 partners on the test machine.
  "kb_versions.created_by": { export: { excluded: STAFF }, erasure: "tombstone" },
  "kb_assets.created_by": { export: { excluded: STAFF }, erasure: "tombstone" },
  "translation_jobs.requested_by": { export: { excluded: STAFF }, erasure: "tombstone" },
  "messaging_workflows.created_by": { export: { excluded: STAFF }, erasure: "tombstone" },
  "workflow_runs.created_by": { export: { excluded: STAFF }, erasure: "tombstone" },
  "voucher_batches.created_by": { export: { excluded: STAFF }, erasure: "tombstone" },
  "config_documents.updated_by": { export: { excluded: STAFF }, erasure: "tombstone" },
};

/** The member columns the erasure treats one way, as `table.column` pairs in the order of the list. */
export function erasedBy(kind: "delete" | "tombstone"): { table: string; column: string }[] {
  return Object.entries(MEMBER_COLUMNS)
    .filter(([, c]) => c.erasure === kind)
    .map(([name]) => {
      const [table, column] = name.split(".") as [string, string];
      return { table, column };
    });
}
