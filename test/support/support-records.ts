import type { Db } from "../../src/db/port";
import type { IdGenerator } from "../../src/platform/ids";
import type { SupportCategory } from "../../src/services/kb/sections";
import type { EscalationReason } from "../../src/services/support/escalation";
import { recordSupportAnswer } from "../../src/services/support/records";

export interface RecordedAnswer {
  at: number;
  category: SupportCategory;
  language: string;
  via: "model" | "fallback";
  /** Escalates (and opens a ticket) when non-empty. */
  reasons?: EscalationReason[];
  cited?: boolean;
}

/** Writes a support answer through the same writer the support chat uses; returns its ticket id, if it escalated. */
export async function recordAnswer(db: Db, ids: IdGenerator, userId: string, a: RecordedAnswer): Promise<string | null> {
  const reasons = a.reasons ?? [];
  const { ticketId } = await recordSupportAnswer(db, ids, {
    userId,
    language: a.language,
    via: a.via,
    reasons,
    at: a.at,
    answer: {
      success: true,
      response: "",
      category: a.category,
      escalate: reasons.length > 0,
      ticketHint: "",
      citations: a.cited ? [{ title: "Help", source: "kb#help" }] : [],
    },
  });
  return ticketId;
}
