import type { Db } from "../../db/port";
import { supportAnswers, supportTickets } from "../../db/tables/support";
import type { IdGenerator } from "../../platform/ids";
import type { EscalationReason } from "./escalation";
import type { SupportAnswer } from "./agent";

export interface AnswerRecord {
  userId: string;
  language: string;
  via: "model" | "fallback";
  answer: SupportAnswer;
  reasons: readonly EscalationReason[];
  at: number;
}

/**
 * Records a support answer as given, and opens a ticket when it escalated, in one transaction so
 * that an escalation is never counted without its ticket or the other way round.
 */
export async function recordSupportAnswer(db: Db, ids: IdGenerator, record: AnswerRecord): Promise<{ answerId: string; ticketId: string | null }> {
  const answerId = ids.next("sa");
  const ticketId = record.answer.escalate ? ids.next("tkt") : null;
  const createdAt = new Date(record.at);
  const reasons = [...new Set(record.reasons)];
  await db.transaction(async (tx) => {
    await tx.insert(supportAnswers).values({
      id: answerId,
      category: record.answer.category,
      language: record.language,
      via: record.via,
      escalated: record.answer.escalate,
      reasons,
      cited: record.answer.citations.length > 0,
      createdAt,
    });
    if (ticketId) {
      await tx.insert(supportTickets).values({ id: ticketId, answerId, userId: record.userId, category: record.answer.category, language: record.language, reasons, createdAt });
    }
  });
  return { answerId, ticketId };
}
