import type { KvScript, ScoredMember } from "./port";

/**
 * Declares a script. The result is frozen because adapters cache the script's SHA-1 by object
 * identity (ScriptShas); a Lua body changed after the first eval would otherwise run under a stale hash.
 */
export function defineScript<T>(def: KvScript<T>): KvScript<T> {
  return Object.freeze({ ...def });
}

/** Hex SHA-1 of a UTF-8 string, the hash Redis uses to name a cached script. */
export async function sha1Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A script's SHA-1 by script object: each store adapter keeps one, so a script is hashed once per store. */
export type ScriptShas = WeakMap<KvScript<unknown>, Promise<string>>;

/** The script's SHA-1, from `cache` when it has been computed before. */
export function scriptSha(script: KvScript<unknown>, cache?: ScriptShas): Promise<string> {
  let sha = cache?.get(script);
  if (!sha) {
    sha = sha1Hex(script.lua);
    cache?.set(script, sha);
  }
  return sha;
}

/** True for the error Redis returns when EVALSHA names a script its cache no longer holds. */
export function isNoScriptError(error: unknown): boolean {
  return error instanceof Error && error.message.includes("NOSCRIPT");
}

/**
 * EVALSHA first, so the normal case costs one round trip without sending the script body;
 * EVAL only after Redis lost its script cache (restart, failover, SCRIPT FLUSH). EVAL also
 * reloads the cache, so the next call is back to EVALSHA.
 */
export async function evalWithFallback<T>(
  script: KvScript<T>,
  run: { evalsha(sha: string): Promise<unknown>; eval(lua: string): Promise<unknown> },
  shas: ScriptShas,
): Promise<T> {
  const sha = await scriptSha(script, shas);
  let raw: unknown;
  try {
    raw = await run.evalsha(sha);
  } catch (error) {
    if (!isNoScriptError(error)) throw error;
    raw = await run.eval(script.lua);
  }
  return script.parse(raw);
}

// Reply helpers shared by the two Redis-backed adapters.

/** Redis sends scores as strings, infinities as "inf" / "-inf". */
export function parseScore(raw: unknown): number {
  const text = String(raw);
  if (text === "inf" || text === "+inf") return Infinity;
  if (text === "-inf") return -Infinity;
  return Number(text);
}

/** A flat WITHSCORES reply [member, score, member, score, ...] as pairs. */
export function toScoredMembers(raw: unknown): ScoredMember[] {
  const flat = Array.isArray(raw) ? raw : [];
  const out: ScoredMember[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push({ member: String(flat[i]), score: parseScore(flat[i + 1]) });
  return out;
}
