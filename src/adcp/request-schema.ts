/**
 * Whether a request is one the agent's AdCP version accepts, checked against
 * that version's JSON Schema before it leaves us: a request a seller would
 * refuse as invalid is ours to fix, never the seller's to find.
 */
import { validatorFor } from './schemas/compiled-validators.js';
import type { AdcpError } from './types.js';
import { knownVersions, schemaSet } from './schemas/schema-sets.js';
import type { ErrorObject } from 'ajv';
import { issuesOf, keptErrors, type SchemaIssue } from './schemas/schema-issues.js';

export type { SchemaIssue } from './schemas/schema-issues.js';

/** The version we speak with an agent whose version we have not learned. */
export const DEFAULT_ADCP_VERSION = '3.0';

/**
 * The problems of `params` as a `task` request of AdCP `version`: empty when it is
 * valid, null when we have no schema for the task (a task of another protocol, or
 * a version we have no schemas for): then nothing can be said, and nothing is held back.
 */
export function requestIssues(task: string, params: Record<string, unknown>, version: string = DEFAULT_ADCP_VERSION): SchemaIssue[] | null {
  const errors = requestErrors(task, params, version);
  return errors === null ? null : issuesOf(errors);
}

/**
 * Ajv's own errors for the same check (of each failed union, the branch meant): for a
 * caller that words them itself, as the sandbox seller does in the SDK's words.
 */
export function requestErrors(task: string, params: Record<string, unknown>, version: string = DEFAULT_ADCP_VERSION): ErrorObject[] | null {
  const set = schemaSet(version);
  const schemaId = set?.requests.get(task);
  if (!set || !schemaId) return null;
  const validate = validatorFor(set, schemaId);
  if (validate(params)) return [];
  return keptErrors(validate.errors ?? []);
}

/**
 * The error a request that fails its schema ends with, unsent (null when it passes):
 * REQUEST_INVALID, correctable, every issue in `details.issues`, `details.side: "ours"`
 * (a request we built or passed on; a caller's own mistakes are refused before).
 */
export function requestInvalidError(task: string, params: Record<string, unknown>, version: string = DEFAULT_ADCP_VERSION): AdcpError | null {
  const issues = requestIssues(task, params, version);
  if (!issues || issues.length === 0) return null;
  return {
    code: 'REQUEST_INVALID',
    message: `our ${task} request is not valid for AdCP ${version} (${describeIssues(issues)}); nothing was sent`,
    recovery: 'correctable',
    details: { issues: issues.map(({ pointer, message }) => ({ pointer, message })), side: 'ours', adcp_version: version },
  };
}

/** The first few issues in one line: `/a/b is required; /c must be one of: …`. */
export function describeIssues(issues: readonly SchemaIssue[]): string {
  const shown = issues.slice(0, 3).map((i) => `${i.pointer} ${i.message}`);
  return issues.length > 3 ? `${shown.join('; ')}; and ${issues.length - 3} more` : shown.join('; ');
}

/** The tasks we send, whose validators are worth compiling ahead (at install: scripts/prepare.mjs). */
export const TASKS_WE_SEND = [
  'create_media_buy', 'update_media_buy', 'get_media_buys', 'get_media_buy_delivery', 'sync_creatives', 'list_creatives',
  'get_products', 'get_adcp_capabilities', 'tasks/get', 'tasks/list', 'get_task_status', 'list_tasks',
  'sync_plans', 'check_governance', 'report_plan_outcome', 'sync_governance', 'activate_signal', 'acquire_rights',
] as const;

/** Compiles (and caches on disk) the validators of `tasks` in every version we speak; returns how many. */
export function warmRequestValidators(tasks: readonly string[] = TASKS_WE_SEND): number {
  let n = 0;
  for (const version of knownVersions()) {
    const set = schemaSet(version);
    for (const task of tasks) {
      const schemaId = set?.requests.get(task);
      if (!set || !schemaId) continue;
      validatorFor(set, schemaId);
      n++;
    }
  }
  return n;
}
