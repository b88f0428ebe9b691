/**
 * The sandbox seller's `sync_creatives` and `list_creatives` (AdCP 3.0.6 shapes)
 * over its creative library (creative-library.ts).
 *
 * `sync_creatives` is idempotent by key like every mutation and answers at once
 * (or, when a creative's name contains "queue", `submitted` with a task that does
 * the sync and completes later, its result by webhook and `tasks/get`):
 * each creative `created`, `updated` or `unchanged` with its advisory
 * `pending_review` status, or `failed` when its format is not one this seller
 * offers (the others still go through, as AdCP allows per item); assignments to
 * the account's buys' packages are recorded (`assigned_to`), others reported in
 * `assignment_errors`. A request off the schema never gets here: it is refused
 * whole, as an SDK-built seller refuses it (request-check.ts). `list_creatives`
 * filters by ids, statuses, names, buys and update times, and pages with a cursor.
 */
import { checkPushConfig } from './behaviours.js';
import type { IdempotencyLedger } from './idempotency.js';
import type { TaskRegistry } from './tasks.js';
import { IDEMPOTENCY_KEY_PATTERN } from './idempotency.js';
import { CREATIVE_STATUSES, CreativeLibrary, type LibraryCreative } from './creative-library.js';
import type { MediaBuyBook } from './media-buy-book.js';
import { assertValidAdcpReply } from './sdk-validator.js';
import { errorResult, isPlainObject, ok, type ToolResult } from './wire.js';

type Args = Record<string, unknown>;

/** A sync queued as a task: `run` does it and returns the reply's body; the tool answers what this returns (`submitted`). */
export type QueueSync = (args: Args, run: () => Record<string, unknown>) => ToolResult;

const QUEUE_WORD = /queue/i;

/**
 * Queues a sync as a `submitted` task that runs it after `delayMs` and completes with its
 * reply (webhook, tasks/get); `version`, the one the sync is served in, is its webhooks'.
 */
export function queueAsTask(tasks: TaskRegistry, delayMs: number, version = '3.0'): QueueSync {
  return (args, run) => {
    const push = checkPushConfig(args.push_notification_config);
    const message = 'Sandbox: creatives queued for ingestion; poll tasks/get or wait for the webhook.';
    const echo = args.context !== undefined ? { context: args.context } : {};
    const task = tasks.create({
      task_type: 'sync_creatives',
      status: 'submitted',
      message,
      ...echo,
      ...(push && !('code' in push) && { push }),
      ...(typeof args.idempotency_key === 'string' && { idempotency_key: args.idempotency_key }),
      request: args,
      ...(version !== '3.0' && { adcp_version: version }),
    });
    tasks.schedule(delayMs, () => tasks.transition(task.task_id, 'completed', { result: run() }));
    return ok({ status: 'submitted', task_id: task.task_id, message, ...echo });
  };
}

export async function syncCreatives(
  library: CreativeLibrary,
  book: MediaBuyBook,
  ledger: IdempotencyLedger,
  args: Args,
  principal: string,
  opts: {
    /** What every item's advisory status says instead of its own (LiveBuyOptions.creativeAdvisoryStatus). */
    advisory?: string;
    /** How a sync whose creatives ask for it ("queue" in a name) is run later, as a task. */
    queue?: QueueSync;
    /** The format ids this seller takes (its products'); a creative in another fails its item. */
    formats?: readonly string[];
  } = {},
): Promise<ToolResult> {
  const advisory = opts.advisory;
  const echo = args.context !== undefined ? { context: args.context } : {};
  const fail = (code: string, message: string, field?: string, details?: Record<string, unknown>): ToolResult =>
    errorResult(code, message, { recovery: 'correctable', ...(field && { field }), ...(details && { details }), extra: echo });
  const key = args.idempotency_key;
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key)) return fail('INVALID_REQUEST', 'idempotency_key is required and must match ^[A-Za-z0-9_.:-]{16,255}$', 'idempotency_key');
  if (!Array.isArray(args.creatives) || args.creatives.length === 0) return fail('INVALID_REQUEST', 'creatives must be a non-empty array', 'creatives');
  const accountId = CreativeLibrary.accountOf(args.account);
  const { result } = await ledger.run(principal, key, args, async () => {
    const queued = opts.queue && (args.creatives as unknown[]).some((c) => isPlainObject(c) && typeof c.name === 'string' && QUEUE_WORD.test(c.name));
    return queued ? opts.queue!(args, run) : ok(run());
  });
  return result;

  /** The sync itself: the library changed, and the reply's body. */
  function run(): Record<string, unknown> {
    const packagesOf = new Map<string, { buyId: string }>();
    for (const buy of book.list({ account: args.account })) for (const p of buy.packages) packagesOf.set(p.package_id, { buyId: buy.media_buy_id });
    const assignments = (Array.isArray(args.assignments) ? args.assignments : []).filter(isPlainObject);
    const items = (args.creatives as unknown[]).map((raw, i) => {
      const c = isPlainObject(raw) ? raw : {};
      const id = typeof c.creative_id === 'string' ? c.creative_id : `creatives[${i}]`;
      const unsupported = formatProblem(c.format_id, opts.formats);
      if (unsupported) return { creative_id: id, action: 'failed', errors: [{ code: 'CREATIVE_REJECTED', message: unsupported, field: `creatives[${i}].format_id` }] };
      const { action, creative } = library.upsert(accountId, c);
      const assigned: string[] = [];
      const assignmentErrors: Record<string, string> = {};
      for (const a of assignments.filter((x) => x.creative_id === id)) {
        const packageId = String(a.package_id);
        const owner = packagesOf.get(packageId);
        const buy = owner && book.find(owner.buyId);
        if (!buy) {
          assignmentErrors[packageId] = `no package ${packageId} in this account's media buys`;
          continue;
        }
        library.assign(creative, buy, packageId);
        assigned.push(packageId);
      }
      return {
        creative_id: id,
        action,
        status: advisory ?? creative.status,
        ...(assignments.some((x) => x.creative_id === id) && { assigned_to: assigned }),
        ...(Object.keys(assignmentErrors).length > 0 && { assignment_errors: assignmentErrors }),
      };
    });
    const body = { creatives: items, sandbox: true, ...echo };
    assertValidAdcpReply('sandbox seller', 'sync_creatives', body);
    return body;
  }
}

function iso(raw: unknown): number | undefined {
  if (raw === undefined) return undefined;
  const ms = typeof raw === 'string' ? Date.parse(raw) : NaN;
  return Number.isNaN(ms) ? NaN : ms;
}

export function listCreatives(library: CreativeLibrary, args: Args): ToolResult {
  const echo = args.context !== undefined ? { context: args.context } : {};
  const invalid = (message: string, field: string): ToolResult => errorResult('INVALID_REQUEST', message, { field, extra: echo });
  const filters = isPlainObject(args.filters) ? args.filters : {};
  const ids = Array.isArray(filters.creative_ids) ? new Set(filters.creative_ids.map(String)) : undefined;
  const statuses = Array.isArray(filters.statuses) ? filters.statuses : undefined;
  if (statuses && !statuses.every((s) => (CREATIVE_STATUSES as readonly unknown[]).includes(s))) return invalid(`filters.statuses must be creative statuses (${CREATIVE_STATUSES.join(', ')})`, 'filters.statuses');
  const after = iso(filters.updated_after);
  const before = iso(filters.updated_before);
  if (Number.isNaN(after) || Number.isNaN(before)) return invalid('updated_after and updated_before must be ISO 8601 date-times', 'filters');
  const buys = Array.isArray(filters.media_buy_ids) ? new Set(filters.media_buy_ids.map(String)) : undefined;
  const nameContains = typeof filters.name_contains === 'string' ? filters.name_contains.toLowerCase() : undefined;
  const page = isPlainObject(args.pagination) ? args.pagination : {};
  const max = typeof page.max_results === 'number' && Number.isInteger(page.max_results) && page.max_results >= 1 ? Math.min(page.max_results, 100) : 50;
  const offset = typeof page.cursor === 'string' && /^\d+$/.test(page.cursor) ? Number(page.cursor) : 0;

  const matching = library
    .all(CreativeLibrary.accountOf(args.account) || undefined)
    // Archived creatives are left out unless asked for, as the spec says.
    .filter((c) => (statuses ? statuses.includes(c.status) : c.status !== 'archived'))
    .filter((c) => !ids || ids.has(c.creative_id))
    .filter((c) => after === undefined || Date.parse(c.updated_date) > after)
    .filter((c) => before === undefined || Date.parse(c.updated_date) < before)
    .filter((c) => !buys || c.assignments.some((a) => buys.has(a.media_buy_id)))
    .filter((c) => !nameContains || c.name.toLowerCase().includes(nameContains));
  const shown = matching.slice(offset, offset + max);
  const more = offset + max < matching.length;
  const body = {
    query_summary: { total_matching: matching.length, returned: shown.length },
    pagination: { has_more: more, ...(more && { cursor: String(offset + max) }), total_count: matching.length },
    creatives: shown.map((c) => view(c, args.include_assignments === true)),
    sandbox: true,
    ...echo,
  };
  assertValidAdcpReply('sandbox seller', 'list_creatives', body);
  return ok(body);
}

function view(c: LibraryCreative, withAssignments: boolean): Record<string, unknown> {
  return {
    creative_id: c.creative_id,
    name: c.name,
    format_id: c.format_id,
    status: c.status,
    created_date: c.created_date,
    updated_date: c.updated_date,
    ...(withAssignments && {
      assignments: { assignment_count: c.assignments.length, assigned_packages: c.assignments.map((a) => ({ package_id: a.package_id, assigned_date: a.assigned_date })) },
    }),
  };
}

/** Why this seller cannot take a creative of `formatId` (null when it can, or when no formats are set). */
function formatProblem(formatId: unknown, formats: readonly string[] | undefined): string | null {
  if (!formats) return null;
  const id = isPlainObject(formatId) ? formatId.id : undefined;
  if (typeof id === 'string' && formats.includes(id)) return null;
  return `Sandbox: format ${typeof id === 'string' ? id : JSON.stringify(formatId)} is not one this seller offers (${formats.join(', ')})`;
}
