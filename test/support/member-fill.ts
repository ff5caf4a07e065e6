import { sql, type SQL } from "drizzle-orm";
import { randomSuffix } from "./services";

/**
 * One way to put a member into each column that refers to a user, for the erasure test
 * (test/integration/account-erasure.test.ts). `low` and `high` are other people whose ids sort
 * before and after every member's, so the pair tables get the member on either side. A column
 * filled through the API (the ledger, which only its functions may write) says so with "api".
 */
export interface FillIds {
  u: string;
  low: string;
  high: string;
  email: string;
  at: string;
}

type Fill = ((ids: FillIds) => SQL[]) | "api";

const r = () => `${randomSuffix()}${randomSuffix()}`;

export const FILLS: Record<string, Fill> = {
  "api_keys.created_by": ({ u }) => [sql`insert into api_keys (id, key_hash, prefix, created_by) values (${`key_${r()}`}, ${`hash${r()}`}, 'abcd1234', ${u})`],
  "ledger_accounts.user_id": "api",
  "ledger_transactions.actor_user_id": "api",
  "subscriptions.user_id": ({ u, at }) => [
    sql`insert into subscriptions (id, user_id, plan_id, current_period_start, current_period_end, created_at, updated_at) values (${`sub_${r()}`}, ${u}, 'premium', ${at}, ${at}, ${at}, ${at})`,
  ],
  "profiles.user_id": "api",
  "blocks.blocker_id": ({ u, low }) => [sql`insert into blocks (blocker_id, blocked_id, created_at) values (${u}, ${low}, now())`],
  "blocks.blocked_id": ({ u, high }) => [sql`insert into blocks (blocker_id, blocked_id, created_at) values (${high}, ${u}, now())`],
  "reports.reporter_id": ({ u, low }) => [sql`insert into reports (id, reporter_id, reported_id, reason, details, created_at) values (${`rep_${r()}`}, ${u}, ${low}, 'spam', 'sent me links', now())`],
  "reports.reported_id": ({ u, high }) => [sql`insert into reports (id, reporter_id, reported_id, reason, details, created_at) values (${`rep_${r()}`}, ${high}, ${u}, 'spam', 'they sent links', now())`],
  "swipes.swiper_id": ({ u, low }) => [sql`insert into swipes (swiper_id, target_id, action, created_at) values (${u}, ${low}, 'like', now())`],
  "swipes.target_id": ({ u, high }) => [sql`insert into swipes (swiper_id, target_id, action, created_at) values (${high}, ${u}, 'pass', now())`],
  "matches.user_low": ({ u, high }) => [sql`insert into matches (id, user_low, user_high, created_at) values (${`mat_${r()}`}, ${u}, ${high}, now())`],
  "matches.user_high": ({ u, low }) => [sql`insert into matches (id, user_low, user_high, created_at, unmatched_at, unmatched_by) values (${`mat_${r()}`}, ${low}, ${u}, now(), now(), ${u})`],
  "winks.sender_id": ({ u, low }) => [sql`insert into winks (id, sender_id, recipient_id, message, status, created_at) values (${`wnk_${r()}`}, ${u}, ${low}, 'hello there', 'pending', now())`],
  "winks.recipient_id": ({ u, high }) => [sql`insert into winks (id, sender_id, recipient_id, message, status, created_at) values (${`wnk_${r()}`}, ${high}, ${u}, 'hi', 'declined', now())`],
  "wink_daily_counts.user_id": ({ u }) => [sql`insert into wink_daily_counts (user_id, day, count) values (${u}, '2026-01-01', 3)`],
  "events.user_id": ({ u, low, high }) => [
    sql`insert into events (user_id, type, data, created_at) values (${u}, 'match.created', ${JSON.stringify({ userId: high })}::jsonb, now())`,
    // The member in someone else's stream: the person they winked at.
    sql`insert into events (user_id, type, data, created_at) values (${low}, 'wink.received', ${JSON.stringify({ userId: u, message: "hello there" })}::jsonb, now())`,
  ],
  "payments.user_id": ({ u, email }) => [
    sql`insert into payments (id, provider, user_id, status, amount, currency, coins, details, idempotency_key, created_at, updated_at)
        values (${`pay_${r()}`}, 'card-b', ${u}, 'pending', 100, 'USD', 100, ${JSON.stringify({ phoneNumber: "+254700000001", email })}::jsonb, ${`idem-${r()}`}, now(), now())`,
  ],
  "support_tickets.user_id": ({ u }) => {
    const answer = `ans_${r()}`;
    return [
      sql`insert into support_answers (id, category, language, via, escalated, reasons, cited, created_at) values (${answer}, 'account', 'en', 'model', true, '[]', false, now())`,
      sql`insert into support_tickets (id, answer_id, user_id, category, language, reasons, created_at) values (${`tkt_${r()}`}, ${answer}, ${u}, 'account', 'en', '["asked_for_human"]', now())`,
    ];
  },
  "support_tickets.resolved_by": ({ u, low }) => {
    const answer = `ans_${r()}`;
    return [
      sql`insert into support_answers (id, category, language, via, escalated, reasons, cited, created_at) values (${answer}, 'billing', 'en', 'model', true, '[]', false, now())`,
      sql`insert into support_tickets (id, answer_id, user_id, category, language, reasons, status, created_at, resolved_at, resolved_by) values (${`tkt_${r()}`}, ${answer}, ${low}, 'billing', 'en', '[]', 'resolved', now(), now(), ${u})`,
    ];
  },
  "support_video_requests.user_id": ({ u }) => [
    sql`insert into support_video_requests (id, user_id, reason, priority, priority_rank, platform, language, callback_times, timezone, created_at)
        values (${`svr_${r()}`}, ${u}, 'my payment failed', 'normal', 1, 'web', 'en', '[]', 'Africa/Nairobi', now())`,
  ],
  "support_video_requests.filed_by": ({ u, low }) => [
    sql`insert into support_video_requests (id, user_id, reason, priority, priority_rank, platform, language, callback_times, timezone, status, filed_by, created_at)
        values (${`svr_${r()}`}, ${low}, 'cannot sign in', 'high', 2, 'web', 'en', '[]', 'UTC', 'done', ${u}, now())`,
  ],
  "kb_versions.created_by": ({ u }) => [sql`insert into kb_versions (content, created_by) values ('# KB', ${u})`],
  "kb_assets.created_by": ({ u }) => [
    sql`insert into kb_assets (id, title, source, content_type, byte_size, content_hash, blob_key, grounding_text, sections, created_by)
        values (${`kba_${r()}`}, 'Guide', 'upload:guide.txt', 'text/plain', 5, ${r()}, ${`kb/${r()}`}, 'guide', '[]', ${u})`,
  ],
  "partners.user_id": ({ u, email }) => {
    const partner = `prt_${r()}`;
    const message = `msg_${r()}`;
    return [
      sql`insert into partners (id, user_id, company_name, contact_name, contact_email, description, business_type, country, webhook_url, webhook_secret, created_at, updated_at)
          values (${partner}, ${u}, 'Gone Venues', 'Gone Person', ${email}, 'Rooftop', 'venue', 'KE', 'https://hooks.example/gone', 'whsec_x', now(), now())`,
      sql`insert into outbox_messages (id, kind, channel, target_id, body, created_at) values (${message}, 'partner.approved', 'webhook', ${partner}, ${JSON.stringify({ contactEmail: email })}, now())`,
      sql`insert into delivery_records (id, channel, route, outcome, message_id, occurred_at) values (${`dlv_${r()}`}, 'webhook', 'hooks.example', 'failed', ${message}, now())`,
    ];
  },
  "partners.reviewed_by": ({ u, low }) => [
    sql`insert into partners (id, user_id, company_name, contact_name, contact_email, description, business_type, country, status, reviewed_by, reviewed_at, created_at, updated_at)
        values (${`prt_${r()}`}, ${low}, 'Low Cafe', 'Low', 'low@example.test', 'Cafe', 'cafe', 'KE', 'approved', ${u}, now(), now(), now())`,
  ],
  "translation_jobs.requested_by": ({ u }) => [
    sql`insert into translation_jobs (id, namespace, overwrite, status, progress, requested_by, created_at, updated_at) values (${`trj_${r()}`}, 'common', false, 'done', '[]', ${u}, now(), now())`,
  ],
  "voucher_batches.created_by": ({ u }) => [sql`insert into voucher_batches (id, coins, count, created_by, created_at) values (${`vbt_${r()}`}, 5, 1, ${u}, now())`],
  "vouchers.redeemed_by": ({ u, low }) => {
    const batch = `vbt_${r()}`;
    return [
      sql`insert into voucher_batches (id, coins, count, created_by, created_at) values (${batch}, 5, 1, ${low}, now())`,
      sql`insert into vouchers (id, batch_id, code_hash, hint, coins, status, redeemed_by, redeemed_at, ledger_transaction_id) values (${`vch_${r()}`}, ${batch}, ${r()}, 'AB', 5, 'redeemed', ${u}, now(), ${`txn_${r()}`})`,
    ];
  },
  "messaging_workflows.created_by": ({ u }) => [
    sql`insert into messaging_workflows (id, name, graph, created_by, created_at, updated_at) values (${`wfl_${r()}`}, 'Welcome', '{}', ${u}, now(), now())`,
  ],
  "subscription_charges.user_id": ({ u, at }) => [
    sql`insert into subscription_charges (transaction_id, user_id, plan_id, coins, created_at) values (${`txn_${r()}`}, ${u}, 'premium', 30, ${at})`,
  ],
  "account_exports.user_id": ({ u }) => [
    sql`insert into account_exports (id, user_id, status, document, byte_size, created_at) values (${`exp_${r()}`}, ${u}, 'ready', ${JSON.stringify({ account: { userId: u } })}, 40, now())`,
  ],
  // A run the member started as staff, and one a platform event of theirs started (their name and
  // address in the run's input and in its hand-over message).
  "workflow_runs.created_by": ({ u, low, email }) => {
    const workflow = `wfl_${r()}`;
    const byEvent = `wfr_${r()}`;
    const input = JSON.stringify({ userId: u, email, displayName: "Gone Person", event: { id: 1, type: "match.created", data: { userId: low } } });
    return [
      sql`insert into messaging_workflows (id, name, graph, created_by, created_at, updated_at) values (${workflow}, 'Matched', '{}', ${low}, now(), now())`,
      sql`insert into workflow_runs (id, workflow_id, workflow_version, trigger, input, status, token_hash, created_by, created_at, updated_at, deadline_at)
          values (${`wfr_${r()}`}, ${workflow}, 1, 'manual', '{}', 'succeeded', ${r()}, ${u}, now(), now(), now())`,
      sql`insert into workflow_runs (id, workflow_id, workflow_version, trigger, event_id, input, status, token_hash, created_at, updated_at, deadline_at)
          values (${byEvent}, ${workflow}, 1, 'match.created', ${Math.floor(Math.random() * 1e9)}, ${input}::jsonb, 'queued', ${r()}, now(), now(), now())`,
      sql`insert into outbox_messages (id, kind, channel, target_id, body, created_at)
          values (${`msg_${r()}`}, 'workflow.run', 'engine', ${workflow}, ${JSON.stringify({ data: { runId: byEvent, workflowId: workflow, input: JSON.parse(input) } })}, now())`,
    ];
  },
  "idempotency_keys.user_id": ({ u, low }) => [
    sql`insert into idempotency_keys (user_id, key, fingerprint, status, response_status, response_body, created_at, completed_at)
        values (${u}, ${r()}, 'fp', 'done', 200, ${JSON.stringify({ toUserId: low })}::jsonb, now(), now())`,
  ],
  "profile_impressions.user_id": ({ u }) => [sql`insert into profile_impressions (user_id, day, count) values (${u}, '2026-01-01', 4)`],
  "profile_impression_viewers.user_id": ({ u, low }) => [
    sql`insert into profile_impression_viewers (day, user_id, viewer_id) values ('2026-01-01', ${u}, ${low})`,
    sql`insert into profile_impression_viewers (day, user_id, viewer_id) values ('2026-01-01', ${low}, ${u})`,
  ],
  "profile_impressions_capped.user_id": ({ u }) => [sql`insert into profile_impressions_capped (day, user_id) values ('2026-01-01', ${u})`],
  "admin_audit_log.actor_user_id": ({ u, low }) => [
    sql`insert into admin_audit_log (id, actor_user_id, credential, action, target_type, target_id, request_id, details, created_at)
        values (${`aud_${r()}`}, ${u}, 'token', 'coins.award', 'user', ${low}, 'req_1', ${JSON.stringify({ by: u })}::jsonb, now())`,
    sql`insert into admin_audit_log (id, actor_user_id, credential, action, target_type, target_id, request_id, details, created_at)
        values (${`aud_${r()}`}, ${low}, 'token', 'coins.award', 'user', ${u}, 'req_2', ${JSON.stringify({ userId: u })}::jsonb, now())`,
  ],
  "config_documents.updated_by": ({ u }) => [sql`insert into config_documents (name, value, version, updated_by, updated_at) values (${`cfg_${r()}`}, '{}', 1, ${u}, now())`],
};
