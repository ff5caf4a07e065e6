import { eq } from "drizzle-orm";
import type { Principal } from "../../auth/principal";
import { assertAdmin } from "../../auth/principal";
import type { Db } from "../../db/port";
import { profiles } from "../../db/schema";
import type { KeyValueStore } from "../../kv/port";
import { ageOn } from "../profiles/card";

/**
 * The per-user AI context: the parts of the user's own profile the assistant may use, and a short
 * memory of the conversation lines they sent, kept in the key-value store for CONTEXT_TTL_MS so
 * each AI call does not read the profile again. Profile edits show after the TTL or an
 * invalidation. Hit and miss counts are kept beside it for the admin stats.
 */
export const CONTEXT_TTL_MS = 10 * 60 * 1000;
export const CONVERSATION_LINES = 10;
const LINE_CHARS = 300;

const KEY = (userId: string) => `ai:ctx:u:${userId}`;
const INDEX = "ai:ctx:index";
const HITS = "ai:ctx:hits";
const MISSES = "ai:ctx:misses";
const INVALIDATIONS = "ai:ctx:invalidations";

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

async function store(deps: ContextDeps, userId: string, value: UserContext): Promise<void> {
  await Promise.all([deps.kv.set(KEY(userId), JSON.stringify(value), { ttlMs: CONTEXT_TTL_MS }), deps.kv.zadd(INDEX, deps.now + CONTEXT_TTL_MS, userId)]);
}

function parse(raw: string): UserContext | undefined {
  try {
    const v = JSON.parse(raw) as UserContext;
    return Array.isArray(v.conversation) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The caller's own context: from the cache, or read and cached. Only ever the actor's own. */
export async function userContext(deps: ContextDeps, actor: Principal): Promise<UserContext> {
  const raw = await deps.kv.get(KEY(actor.userId));
  const cached = raw === null ? undefined : parse(raw);
  if (cached) {
    await deps.kv.incr(HITS);
    return cached;
  }
  const fresh: UserContext = { profile: await loadProfile(deps.db, actor.userId, deps.now), conversation: [], cachedAt: deps.now };
  await Promise.all([deps.kv.incr(MISSES), store(deps, actor.userId, fresh)]);
  return fresh;
}

/** Adds the lines the user just sent to their remembered conversation (the last 10 are kept). */
export async function rememberConversation(deps: ContextDeps, actor: Principal, context: UserContext, lines: string[]): Promise<void> {
  const fresh = lines.map((l) => l.trim().slice(0, LINE_CHARS)).filter(Boolean);
  if (fresh.length === 0) return;
  const conversation = [...context.conversation.filter((l) => !fresh.includes(l)), ...fresh].slice(-CONVERSATION_LINES);
  await store(deps, actor.userId, { ...context, conversation });
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

export async function contextStats(deps: ContextDeps, actor: Principal): Promise<ContextStats> {
  assertAdmin(actor);
  const members = await deps.kv.zrevrangeWithScores(INDEX, 0, -1);
  const expired = members.filter((m) => m.score <= deps.now);
  await Promise.all(expired.map((m) => deps.kv.zrem(INDEX, m.member)));
  const [hits, misses, invalidations] = await Promise.all([count(deps.kv, HITS), count(deps.kv, MISSES), count(deps.kv, INVALIDATIONS)]);
  return {
    entries: members.length - expired.length,
    hits,
    misses,
    hitRate: hits + misses === 0 ? 0 : Math.round((hits / (hits + misses)) * 1000) / 1000,
    invalidations,
    ttlSeconds: CONTEXT_TTL_MS / 1000,
  };
}

/** Drops one user's cached context; true when there was one. */
export async function invalidateContext(deps: ContextDeps, actor: Principal, userId: string): Promise<boolean> {
  assertAdmin(actor);
  const [removed] = await Promise.all([deps.kv.del(KEY(userId)), deps.kv.zrem(INDEX, userId), deps.kv.incr(INVALIDATIONS)]);
  return removed > 0;
}
