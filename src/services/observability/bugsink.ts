import { z } from "zod";
import { assertAdmin, type Principal } from "../../auth/principal";
import type { KeyValueStore } from "../../kv/port";
import type { Logger } from "../../platform/logger";

/** Figures younger than this are answered from the store without asking the tracker. */
export const BUGSINK_CACHE_MS = 60_000;
/** The last figures stay readable this long, to answer while the tracker is down. */
const LAST_KNOWN_TTL_MS = 7 * 86_400_000;
/** Newest unresolved, unmuted issues shown per project. */
export const SAMPLES_PER_PROJECT = 5;
/** Pages of issues read per project (Bugsink pages hold 250); beyond it the counts say `truncated`. */
const MAX_ISSUE_PAGES = 20;
const MAX_PROJECT_PAGES = 10;
const CACHE_KEY = "bugsink:rollup";

const Page = <T extends z.ZodType>(item: T) => z.object({ next: z.string().nullable().optional(), results: z.array(item) });
const ProjectDto = z.object({ id: z.union([z.number(), z.string()]), name: z.string().optional() }).passthrough();
const IssueDto = z
  .object({
    id: z.string(),
    first_seen: z.string(),
    last_seen: z.string(),
    digested_event_count: z.number(),
    calculated_type: z.string().nullable().optional(),
    calculated_value: z.string().nullable().optional(),
    is_resolved: z.boolean(),
    is_muted: z.boolean(),
  })
  .passthrough();

export interface IssueSample {
  id: string;
  title: string;
  firstSeen: string;
  lastSeen: string;
  eventCount: number;
}

export interface ProjectRollup {
  id: string;
  name: string;
  unresolved: number;
  unresolvedUnmuted: number;
  /** True when the project has more issues than were read; the counts are then lower bounds. */
  truncated: boolean;
  samples: IssueSample[];
}

export type BugsinkRollup =
  | { configured: false }
  | { configured: true; status: "ok" | "unavailable"; fetchedAt: string | null; projects: ProjectRollup[] };

export interface BugsinkDeps {
  url: string | undefined;
  token: string | undefined;
  timeoutMs: number;
  kv: KeyValueStore;
  fetch: typeof fetch;
  now: () => number;
  logger: Logger;
}

interface Cached {
  fetchedAt: number;
  projects: ProjectRollup[];
}

/**
 * The error tracker's figures for admins: per project, how many issues are open and the newest of
 * them. A tracker that is down, slow or answers nonsense never fails the call: the answer says
 * `unavailable` and carries the last figures read, if any.
 */
export async function bugsinkRollup(deps: BugsinkDeps, actor: Principal): Promise<BugsinkRollup> {
  assertAdmin(actor);
  if (!deps.url || !deps.token) return { configured: false };
  const cached = await readCache(deps);
  const now = deps.now();
  if (cached && now - cached.fetchedAt >= 0 && now - cached.fetchedAt < BUGSINK_CACHE_MS) {
    return { configured: true, status: "ok", fetchedAt: new Date(cached.fetchedAt).toISOString(), projects: cached.projects };
  }
  try {
    const projects = await readTracker(deps, deps.url, deps.token);
    const fresh: Cached = { fetchedAt: now, projects };
    await deps.kv.set(CACHE_KEY, JSON.stringify(fresh), { ttlMs: LAST_KNOWN_TTL_MS }).catch((error: unknown) => {
      deps.logger.warn("bugsink rollup not cached", { error: String(error) });
    });
    return { configured: true, status: "ok", fetchedAt: new Date(now).toISOString(), projects };
  } catch (error) {
    deps.logger.warn("bugsink unavailable", { error: error instanceof Error ? error.message : String(error) });
    return {
      configured: true,
      status: "unavailable",
      fetchedAt: cached ? new Date(cached.fetchedAt).toISOString() : null,
      projects: cached?.projects ?? [],
    };
  }
}

async function readCache(deps: BugsinkDeps): Promise<Cached | undefined> {
  try {
    const raw = await deps.kv.get(CACHE_KEY);
    return raw ? (JSON.parse(raw) as Cached) : undefined;
  } catch {
    return undefined;
  }
}

async function readTracker(deps: BugsinkDeps, baseUrl: string, token: string): Promise<ProjectRollup[]> {
  const base = new URL(`${baseUrl.replace(/\/+$/, "")}/api/canonical/0/`);
  // One deadline for the whole rollup: a tracker that answers each page slowly is as unusable as one that hangs.
  const signal = AbortSignal.timeout(deps.timeoutMs);
  const get = async <T extends z.ZodType>(url: URL, schema: T): Promise<z.output<T>> => {
    // The token goes to the configured tracker only, whatever a `next` link says.
    if (url.origin !== base.origin) throw new Error("bugsink paging link points at another origin");
    const res = await deps.fetch(url, { headers: { authorization: `Bearer ${token}`, accept: "application/json" }, signal });
    if (!res.ok) throw new Error(`bugsink answered HTTP ${res.status} to ${url.pathname}`);
    const parsed = schema.safeParse(await res.json().catch(() => undefined));
    if (!parsed.success) throw new Error(`bugsink answered an unexpected body to ${url.pathname}`);
    return parsed.data;
  };

  const projects: z.output<typeof ProjectDto>[] = [];
  let next: URL | undefined = new URL("projects/", base);
  for (let page = 0; next && page < MAX_PROJECT_PAGES; page += 1) {
    const body: z.output<ReturnType<typeof Page<typeof ProjectDto>>> = await get(next, Page(ProjectDto));
    projects.push(...body.results);
    next = body.next ? new URL(body.next, base) : undefined;
  }

  return Promise.all(
    projects.map(async (project) => {
      const rollup: ProjectRollup = { id: String(project.id), name: project.name ?? String(project.id), unresolved: 0, unresolvedUnmuted: 0, truncated: false, samples: [] };
      let url: URL | undefined = new URL("issues/", base);
      url.search = new URLSearchParams({ project: String(project.id), sort: "last_seen", order: "desc" }).toString();
      let pages = 0;
      while (url) {
        if (pages === MAX_ISSUE_PAGES) {
          rollup.truncated = true;
          break;
        }
        const body: z.output<ReturnType<typeof Page<typeof IssueDto>>> = await get(url, Page(IssueDto));
        pages += 1;
        for (const issue of body.results) {
          if (issue.is_resolved) continue;
          rollup.unresolved += 1;
          if (issue.is_muted) continue;
          rollup.unresolvedUnmuted += 1;
          if (rollup.samples.length < SAMPLES_PER_PROJECT) rollup.samples.push(sampleOf(issue));
        }
        url = body.next ? new URL(body.next, base) : undefined;
      }
      return rollup;
    }),
  );
}

function sampleOf(issue: z.output<typeof IssueDto>): IssueSample {
  const type = issue.calculated_type ?? "";
  const value = issue.calculated_value ?? "";
  return {
    id: issue.id,
    title: type && value ? `${type}: ${value}` : type || value || "(no title)",
    firstSeen: issue.first_seen,
    lastSeen: issue.last_seen,
    eventCount: issue.digested_event_count,
  };
}
