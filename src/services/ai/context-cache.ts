import { eq } from "drizzle-orm";
import type { Principal } from "../../auth/principal";
import { assertAdmin } from "../../auth/principal";
import type { Db } from "../../db/port";
import { ApiError } from "../../errors";
import { profiles } from "../../db/schema";
import type { KeyValueStore } from "../../kv/port";
import { defineScript } from "../../kv/scripts";
import type { Logger } from "../../platform/logger";
import { ageOn } from "../profiles/card";

/**
 * The per-user AI context: the parts of the user's own profile the assistant may use, and a short
 * memory of the conversation lines they sent, kept in the key-value store for CONTEXT_TTL_MS so
 * each AI call does not read the profile again. A profile save stamps its time beside the entry
 * (`noteProfileChange`); an entry whose profile was read before that stamp gets the profile read
 * again, and keeps its conversation. Hit and miss counts are kept beside it for the admin stats.
 */
export const CONTEXT_TTL_MS = 10 * 60 * 1000;
export const CONVERSATION_LINES = 10;
const LINE_CHARS = 300;

const KEY = (userId: string) => `ai:ctx:u:${userId}`;
const INDEX = "ai:ctx:index";
const HITS = "ai:ctx:hits";
const MISSES = "ai:ctx:misses";
const INVALIDATIONS = "ai:ctx:invalidations";
/** When the user's profile was last saved (ms); kept as long as an entry can live. */
const PROFILE_SAVED = (userId: string) => `ai:ctx:saved:${userId}`;

export interface ProfileSummary {
  displayName: string;
  age: number;
  gender: string;
  interestedIn: string[];
  ageMin: number;
  ageMax: number;
  bio: string | null;
  tagline: string | null;
  interests: string[];
  languages: string[];
  city: string | null;
  country: string | null;
}

export interface UserContext {
  profile: ProfileSummary | null;
  /** The latest conversation lines the user sent, oldest first. */
  conversation: string[];
  cachedAt: number;
}

export interface ContextDeps {
  kv: KeyValueStore;
  db: Db;
  now: number;
  /** Where a store failure is reported when the cache fails open. */
  logger?: Pick<Logger, "warn">;
  /** The caller's entry, already being read (see startContextRead); used for that user only. */
  pendingRead?: PendingContextRead;
}

/** What the cache holds for a user: the entry as stored, and when their profile was last saved. */
export interface ContextRead {
  entry: string | null;
  profileSavedAt: number | null;
}

export interface PendingContextRead {
  userId: string;
  read: Promise<ContextRead>;
}

/** The cache fails open: without the store a context is read from the database and not kept. */
function storeFailed(deps: ContextDeps, what: string, err: unknown): void {
  deps.logger?.warn("AI context cache unavailable; serving without it", { what, err: String(err) });
}

/** The admin routes are about the cache itself: without the store they have nothing to answer. */
async function needStore<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch {
    throw new ApiError("service_unavailable", "the AI context cache is unavailable; retry later");
  }
}

async function loadProfile(db: Db, userId: string, now: number): Promise<ProfileSummary | null> {
  const [row] = await db.select().from(profiles).where(eq(profiles.userId, userId)).limit(1);
  if (!row) return null;
  return {
    displayName: row.displayName,
    age: ageOn(row.birthDate, now),
    gender: row.gender,
    interestedIn: row.interestedIn,
    ageMin: row.ageMin,
    ageMax: row.ageMax,
    bio: row.bio,
    tagline: row.tagline,
    interests: row.interests,
    languages: row.languages,
    city: row.city,
    country: row.country,
  };
}

// Each AI call reads its context and writes it back; one script per step keeps that at two
// store round trips.

/**
 * KEYS: entry, hits, profile-saved stamp. Returns the entry and the stamp, and counts a hit when
 * there is an entry.
 */
export const contextReadScript = defineScript<ContextRead>({
  name: "ai_context_read",
  lua: "local v = redis.call('GET', KEYS[1])\nif v then redis.call('INCR', KEYS[2]) end\nreturn {v, redis.call('GET', KEYS[3])}",
  memory: (kv, [entry, hits, saved]) => {
    const value = kv.get(entry as string);
    if (value !== null) kv.incrBy(hits as string, 1);
    const savedAt = kv.get(saved as string);
    return { entry: value, profileSavedAt: savedAt === null ? null : Number(savedAt) };
  },
  parse: (raw) => {
    const [entry, saved] = (Array.isArray(raw) ? raw : []).map((v: unknown) => (v === null || v === undefined || v === false ? null : String(v)));
    return { entry: entry ?? null, profileSavedAt: saved === undefined || saved === null ? null : Number(saved) };
  },
});

/** KEYS: entry, index. ARGV: value, ttlMs, expiresAt, userId. Writes the entry and indexes it. */
export const contextStoreScript = defineScript<null>({
  name: "ai_context_store",
  lua: "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\nredis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])\nreturn false",
  memory: (kv, [entry, index], [value, ttlMs, expiresAt, userId]) => {
    kv.set(entry as string, value as string, Number(ttlMs));
    kv.zadd(index as string, Number(expiresAt), userId as string);
    return null;
  },
  parse: () => null,
});

async function store(deps: ContextDeps, userId: string, value: UserContext): Promise<void> {
  await deps.kv.eval(contextStoreScript, [KEY(userId), INDEX], [JSON.stringify(value), CONTEXT_TTL_MS, deps.now + CONTEXT_TTL_MS, userId]);
}

function parse(raw: string): UserContext | undefined {
  try {
    const v = JSON.parse(raw) as UserContext;
    return Array.isArray(v.conversation) ? v : undefined;
  } catch {
    return undefined;
  }
}

const readEntry = (kv: KeyValueStore, userId: string) => kv.eval(contextReadScript, [KEY(userId), HITS, PROFILE_SAVED(userId)], []);

/**
 * Starts reading a user's entry ahead of `userContext`, which then waits for this read instead of
 * making its own. The AI routes start it while the rate limiter decides, so the two store calls
 * leave in one write and the request waits for one round trip instead of two in a row. A request
 * that is refused never uses the read; its rejection is handled here, and the lookup still counts
 * in the hit figures, as every lookup does.
 */
export function startContextRead(kv: KeyValueStore, userId: string): PendingContextRead {
  const read = readEntry(kv, userId);
  read.catch(() => undefined);
  return { userId, read };
}

/**
 * The caller's own context: from the cache, or read and cached. Only ever the actor's own. An
 * entry read before the profile's last save counts as a miss: the profile is read again and the
 * remembered conversation kept. (A save within a few milliseconds of clock skew between two
 * servers may be missed until the entry expires.)
 */
export async function userContext(deps: ContextDeps, actor: Principal): Promise<UserContext> {
  let read: ContextRead;
  try {
    read = await (deps.pendingRead?.userId === actor.userId ? deps.pendingRead.read : readEntry(deps.kv, actor.userId));
  } catch (err) {
    storeFailed(deps, "read", err);
    return { profile: await loadProfile(deps.db, actor.userId, deps.now), conversation: [], cachedAt: deps.now };
  }
  const { entry, profileSavedAt } = read;
  const cached = entry === null ? undefined : parse(entry);
  if (cached && (profileSavedAt === null || cached.cachedAt > profileSavedAt)) return cached;
  const fresh: UserContext = { profile: await loadProfile(deps.db, actor.userId, deps.now), conversation: cached?.conversation ?? [], cachedAt: deps.now };
  // An entry that does not parse, or is older than the profile, was counted as a hit by the read; it is a miss.
  const uncount = entry === null ? [] : [deps.kv.incr(HITS, -1)];
  await Promise.all([deps.kv.incr(MISSES), store(deps, actor.userId, fresh), ...uncount]).catch((err: unknown) => storeFailed(deps, "store", err));
  return fresh;
}

/** Stamps a profile save, so cached AI contexts read before it are refreshed on their next use. */
export async function noteProfileChange(kv: KeyValueStore, userId: string, savedAt: number): Promise<void> {
  await kv.set(PROFILE_SAVED(userId), String(savedAt), { ttlMs: CONTEXT_TTL_MS });
}

/** Adds the lines the user just sent to their remembered conversation (the last 10 are kept). */
export async function rememberConversation(deps: ContextDeps, actor: Principal, context: UserContext, lines: string[]): Promise<void> {
  const fresh = lines.map((l) => l.trim().slice(0, LINE_CHARS)).filter(Boolean);
  if (fresh.length === 0) return;
  const conversation = [...context.conversation.filter((l) => !fresh.includes(l)), ...fresh].slice(-CONVERSATION_LINES);
  // The answer is ready: a store that fails now costs the memory of these lines, not the answer.
  await store(deps, actor.userId, { ...context, conversation }).catch((err: unknown) => storeFailed(deps, "remember", err));
}

export interface ContextStats {
  entries: number;
  hits: number;
  misses: number;
  hitRate: number;
  invalidations: number;
  ttlSeconds: number;
}

const count = async (kv: KeyValueStore, key: string) => Number((await kv.get(key)) ?? 0) || 0;

/**
 * KEYS: index. ARGV: now. Drops the index's expired members and counts the rest: one command
 * however large the index, instead of reading it whole and removing members one by one.
 */
export const contextLiveEntriesScript = defineScript<number>({
  name: "ai_context_live_entries",
  lua: "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])\nreturn redis.call('ZCARD', KEYS[1])",
  memory: (kv, [index], [now]) => {
    kv.zremRangeByScore(index as string, -Infinity, Number(now));
    return kv.zcard(index as string);
  },
  parse: (raw) => Number(raw),
});

export async function contextStats(deps: ContextDeps, actor: Principal): Promise<ContextStats> {
  assertAdmin(actor);
  const [entries, hits, misses, invalidations] = await needStore(
    Promise.all([deps.kv.eval(contextLiveEntriesScript, [INDEX], [deps.now]), count(deps.kv, HITS), count(deps.kv, MISSES), count(deps.kv, INVALIDATIONS)]),
  );
  return {
    entries,
    hits,
    misses,
    hitRate: hits + misses === 0 ? 0 : Math.round((hits / (hits + misses)) * 1000) / 1000,
    invalidations,
    ttlSeconds: CONTEXT_TTL_MS / 1000,
  };
}

/** The store keys of one member's AI context, and the index set naming them (an erasure drops all). */
export function contextKeysOf(userId: string): { keys: string[]; sets: [string, string][] } {
  return { keys: [KEY(userId), PROFILE_SAVED(userId)], sets: [[INDEX, userId]] };
}

/** Drops one user's cached context; true when there was one. */
export async function invalidateContext(deps: ContextDeps, actor: Principal, userId: string): Promise<boolean> {
  assertAdmin(actor);
  const [removed] = await needStore(Promise.all([deps.kv.del(KEY(userId)), deps.kv.zrem(INDEX, userId), deps.kv.incr(INVALIDATIONS)]));
  return removed > 0;
}

/**
 * The AI context kept for a member, as stored, for their data export; null when none is kept.
 * Read without touching the hit counts. A store that cannot answer fails the caller, so an export
 * never claims there is nothing when it could not look.
 */
export async function storedContext(kv: KeyValueStore, userId: string): Promise<UserContext | null> {
  const raw = await kv.get(KEY(userId));
  return raw === null ? null : (parse(raw) ?? null);
}
