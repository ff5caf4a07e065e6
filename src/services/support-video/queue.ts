import { and, eq, sql } from "drizzle-orm";
import type { Principal } from "../../auth/principal";
import { PG, pgError } from "../../db/errors";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import { supportVideoRequests } from "../../db/tables/support-video";
import { ApiError } from "../../errors";
import type { IdGenerator } from "../../platform/ids";
import type { LanguageCode } from "../ai/languages";
import { statusMessage } from "./messages";

export const PRIORITIES = ["low", "normal", "high", "urgent"] as const;
export type Priority = (typeof PRIORITIES)[number];
const RANK: Record<Priority, number> = { low: 0, normal: 1, high: 2, urgent: 3 };

export const PLATFORMS = ["ios", "android", "web", "desktop"] as const;
export type Platform = (typeof PLATFORMS)[number];

/** How far ahead a callback window may start. */
const MAX_AHEAD_MS = 30 * 24 * 3600_000;

// One lock for the whole queue: enqueues are rare next to everything else, and taking it makes
// each new request's sequence number and its count of requests ahead one consistent step.
const QUEUE_LOCK_CLASS = 7401;

export interface CallbackWindow {
  from: string;
  to: string;
}

export interface VideoRequestInput {
  /** Whom the call is for; the caller unless support staff file it for someone. */
  userId?: string;
  reason: string;
  priority: Priority;
  platform: Platform;
  language: LanguageCode;
  callbackTimes: CallbackWindow[];
  timezone: string;
}

export interface QueueContext {
  db: Db;
  ids: IdGenerator;
  now: number;
  handlingMinutes: number;
}

export interface VideoRequestResult {
  requestId: string;
  userId: string;
  status: "waiting";
  priority: Priority;
  platform: Platform;
  queuePosition: number;
  estimatedWaitMinutes: number;
  statusMessage: string;
  /** The language of statusMessage: the requested one, or `en` where no translation exists. */
  statusMessageLanguage: LanguageCode;
  language: LanguageCode;
  callbackTimes: CallbackWindow[];
  timezone: string;
  createdAt: string;
}

/**
 * Puts a request for a support video call in the queue and answers where it stands. Position and
 * wait come from the queue itself (requests waiting ahead: higher priority, or the same priority
 * and earlier), never from a model.
 */
export async function requestVideoSupport(ctx: QueueContext, actor: Principal, input: VideoRequestInput): Promise<VideoRequestResult> {
  const subject = input.userId ?? actor.userId;
  if (subject !== actor.userId && actor.role !== "admin") throw new ApiError("forbidden", "a video support request can only be made for yourself");
  // A priority a member could pick for themselves would put them ahead of everyone who did not;
  // members say low or normal, and staff raise a request when its reason warrants it.
  if ((input.priority === "high" || input.priority === "urgent") && actor.role !== "admin") {
    throw new ApiError("invalid_input", `priority '${input.priority}' is set by support staff`, { details: [{ path: "priority", message: "one of low, normal" }] });
  }
  checkWindows(input.callbackTimes, ctx.now);

  const id = ctx.ids.next("svr");
  const createdAt = new Date(ctx.now);
  const rank = RANK[input.priority];
  let position: number;
  try {
    position = await ctx.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(${QUEUE_LOCK_CLASS}, 0)`);
      const [waiting] = await tx
        .select({ id: supportVideoRequests.id })
        .from(supportVideoRequests)
        .where(and(eq(supportVideoRequests.userId, subject), eq(supportVideoRequests.status, "waiting")))
        .limit(1);
      if (waiting) throw new ApiError("conflict", "a video support request is already waiting for this person", { details: `requestId: ${waiting.id}` });
      const [row] = await tx
        .insert(supportVideoRequests)
        .values({
          id,
          userId: subject,
          reason: input.reason,
          priority: input.priority,
          priorityRank: rank,
          platform: input.platform,
          language: input.language,
          callbackTimes: input.callbackTimes,
          timezone: input.timezone,
          filedBy: subject === actor.userId ? null : actor.userId,
          createdAt,
        })
        .returning({ seq: supportVideoRequests.seq });
      const [ahead] = await queryRows<{ n: string }>(
        tx as unknown as Db,
        sql`select count(*)::text as n from support_video_requests
            where status = 'waiting' and (priority_rank > ${rank} or (priority_rank = ${rank} and seq < ${row!.seq}))`,
      );
      return Number(ahead?.n ?? 0) + 1;
    });
  } catch (err) {
    if (pgError(err).code === PG.foreignKeyViolation) throw new ApiError("not_found", "no such user");
    throw err;
  }

  const minutes = position * ctx.handlingMinutes;
  const message = statusMessage(input.language, position, minutes);
  return {
    requestId: id,
    userId: subject,
    status: "waiting",
    priority: input.priority,
    platform: input.platform,
    queuePosition: position,
    estimatedWaitMinutes: minutes,
    statusMessage: message.text,
    statusMessageLanguage: message.language,
    language: input.language,
    callbackTimes: input.callbackTimes,
    timezone: input.timezone,
    createdAt: createdAt.toISOString(),
  };
}

/** Windows must end in the future and start within 30 days; their order and shape are checked by the route. */
function checkWindows(windows: CallbackWindow[], now: number): void {
  const problems = windows.flatMap((w, i) => {
    const from = Date.parse(w.from);
    const to = Date.parse(w.to);
    if (to <= now) return [{ path: `callbackTimes.${i}.to`, message: "must be in the future" }];
    if (from > now + MAX_AHEAD_MS) return [{ path: `callbackTimes.${i}.from`, message: "must be within 30 days" }];
    return [];
  });
  if (problems.length) throw new ApiError("invalid_input", "invalid callback times", { details: problems });
}
