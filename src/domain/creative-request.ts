/**
 * What goes to a seller in a `sync_creatives` for a live buy, and what a person
 * is asked when the seller rejects one (README, Creatives). Pure.
 *
 * The same checks hold for `POST /v1/media-buys/:id/creatives` and for a person's
 * corrected creatives (`respond` to a `creative_rejected` request), so that both
 * fail the same way, before anything is stored or sent: every creative names
 * itself (`creative_id`, once), and every assignment names a creative of the
 * request and a package of this buy.
 */
import { withQuestionId } from './input-question.js';
import type { InputRequest, RejectedCreative } from './input-request.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The spec's bounds: 1–100 creatives per sync. */
export const MAX_CREATIVES = 100;
const ID_MAX = 255;

export interface SyncProblem {
  status: 400;
  code: string;
  message: string;
  details?: Json;
}

export interface Assignment {
  creative_id: string;
  package_id: string;
  weight?: number;
  placement_ids?: string[];
}

export interface SyncInput {
  creatives: Json[];
  assignments?: Assignment[];
}

const problem = (code: string, message: string, details?: Json): SyncProblem => ({ status: 400, code, message, ...(details ? { details } : {}) });

/**
 * Checks what would be sent against the buy's packages. The creatives themselves
 * (format, assets) are the seller's to judge; only what we must read is checked here.
 */
export function checkSyncInput(input: { creatives?: unknown; assignments?: unknown }, packageIds: readonly string[]): SyncInput | SyncProblem {
  const creatives = input.creatives;
  if (!Array.isArray(creatives) || creatives.length === 0) return problem('creatives_required', 'creatives must be a non-empty array of creatives');
  if (creatives.length > MAX_CREATIVES) return problem('too_many_creatives', `at most ${MAX_CREATIVES} creatives per sync (got ${creatives.length})`);
  const ids = new Set<string>();
  for (const [i, c] of creatives.entries()) {
    if (!isObject(c)) return problem('invalid_creative', `creatives[${i}] must be an object`, { index: i });
    const id = c.creative_id;
    if (typeof id !== 'string' || id.trim() === '') return problem('creative_id_required', `creatives[${i}] has no creative_id: every creative needs its own id`, { index: i });
    if (id.length > ID_MAX) return problem('invalid_creative', `creatives[${i}].creative_id is longer than ${ID_MAX} characters`, { index: i });
    if (ids.has(id)) return problem('duplicate_creative_id', `creative_id ${id} appears more than once`, { creative_id: id });
    if (typeof c.name !== 'string' || c.name.trim() === '') return problem('creative_name_required', `creatives[${i}] (${id}) has no name`, { index: i, creative_id: id });
    ids.add(id);
  }
  if (input.assignments === undefined) return { creatives: creatives as Json[] };
  if (!Array.isArray(input.assignments) || input.assignments.length === 0) return problem('invalid_assignments', 'assignments, when given, must be a non-empty array');
  const assignments: Assignment[] = [];
  const pairs = new Set<string>();
  for (const [i, a] of input.assignments.entries()) {
    if (!isObject(a) || typeof a.creative_id !== 'string' || typeof a.package_id !== 'string') {
      return problem('invalid_assignments', `assignments[${i}] needs creative_id and package_id`, { index: i });
    }
    if (!ids.has(a.creative_id)) return problem('unknown_creative', `assignments[${i}] names creative ${a.creative_id}, which is not among the creatives sent`, { index: i, creative_id: a.creative_id });
    if (!packageIds.includes(a.package_id)) {
      return problem('unknown_package', `assignments[${i}] names package ${a.package_id}, which is not a package of this media buy (its packages: ${packageIds.join(', ') || 'none known'})`, {
        index: i,
        package_id: a.package_id,
        packages: [...packageIds],
      });
    }
    const pair = `${a.creative_id}\0${a.package_id}`;
    if (pairs.has(pair)) return problem('duplicate_assignment', `creative ${a.creative_id} is assigned to package ${a.package_id} twice`, { index: i });
    pairs.add(pair);
    if (a.weight !== undefined && (typeof a.weight !== 'number' || !(a.weight >= 0 && a.weight <= 100))) return problem('invalid_assignments', `assignments[${i}].weight must be a number from 0 to 100`, { index: i });
    const placements = a.placement_ids;
    if (placements !== undefined && (!Array.isArray(placements) || placements.length === 0 || !placements.every((p) => typeof p === 'string'))) {
      return problem('invalid_assignments', `assignments[${i}].placement_ids must be a non-empty array of strings`, { index: i });
    }
    const extra = Object.keys(a).filter((k) => !['creative_id', 'package_id', 'weight', 'placement_ids'].includes(k));
    if (extra.length > 0) return problem('invalid_assignments', `assignments[${i}] has fields AdCP does not define: ${extra.join(', ')}`, { index: i });
    assignments.push({ creative_id: a.creative_id, package_id: a.package_id, ...(a.weight !== undefined ? { weight: a.weight as number } : {}), ...(placements ? { placement_ids: placements as string[] } : {}) });
  }
  return { creatives: creatives as Json[], assignments };
}

export function isSyncProblem<T extends object>(v: T | SyncProblem): v is SyncProblem {
  return 'code' in v && 'status' in v;
}

/** The package ids each creative is assigned to by these assignments. */
export function packagesByCreative(input: SyncInput): Map<string, string[]> {
  const out = new Map<string, string[]>(input.creatives.map((c) => [String(c.creative_id), []]));
  for (const a of input.assignments ?? []) out.get(a.creative_id)?.push(a.package_id);
  return out;
}

/** What a person may set when answering a rejection: the corrected creatives, and their assignments. */
export const CORRECTION_FIELDS = ['creatives', 'assignments'] as const;

/**
 * The corrected send: the person's creatives; their assignments if they give any,
 * else the packages each creative had (so a corrected creative goes back where the
 * rejected one was meant to run).
 */
export function correctionInput(params: Json, earlier: ReadonlyMap<string, string[]>): { creatives?: unknown; assignments?: unknown } | SyncProblem {
  const extra = Object.keys(params).filter((k) => !(CORRECTION_FIELDS as readonly string[]).includes(k));
  if (extra.length > 0) return problem('unsupported_params', `a corrected creative is sent as {creatives: [...], assignments?: [...]}; not ${extra.join(', ')}`);
  if (params.assignments !== undefined || !Array.isArray(params.creatives)) return { creatives: params.creatives, assignments: params.assignments };
  const assignments = params.creatives.flatMap((c) => {
    const id = isObject(c) && typeof c.creative_id === 'string' ? c.creative_id : undefined;
    return id ? (earlier.get(id) ?? []).map((package_id) => ({ creative_id: id, package_id })) : [];
  });
  return { creatives: params.creatives, ...(assignments.length > 0 ? { assignments } : {}) };
}

const quoted = (c: RejectedCreative) => `${c.name ? `"${c.name}" ` : ''}(${c.creative_id})`;

/** The inbox item on the sync_creatives operation that sent them: what the seller rejected and why. */
export function creativeRejectedRequest(rejected: RejectedCreative[], buy: { id: string; media_buy_id: string }, now: number): InputRequest {
  const first = rejected[0]!;
  const what =
    rejected.length === 1
      ? `The seller rejected creative ${quoted(first)}: ${first.rejection_reason}`
      : `The seller rejected ${rejected.length} creatives: ${rejected.map((c) => `${quoted(c)}: ${c.rejection_reason}`).join('; ')}`;
  return withQuestionId({
    kind: 'creative_rejected',
    message: `${what}. Send a corrected creative (respond with {"creatives": [...]}) or dismiss the rejection.`,
    allowed: ['respond', 'reject'],
    requested_at: new Date(now).toISOString(),
    creative_id: first.creative_id,
    rejection_reason: first.rejection_reason,
    creatives: rejected,
    media_buy: buy,
  });
}
