/**
 * Whether a reply is one an AdCP version allows, checked against that version's
 * response JSON Schema: for an agent of ours (the sandbox seller speaking 3.1) to
 * check what it sends as strictly as we check what we send (request-schema.ts).
 *
 * Chosen as the SDK's validator chooses (`validateResponse`): a reply whose `status`
 * is `submitted`, `working` or `input-required` is checked against the task's async
 * schema of that status where the version has one, else against its response
 * schema; the root of the schema takes envelope fields it does not list
 * (`relaxedRoot` in compiled-validators.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import type { ErrorObject } from 'ajv';
import { validatorFor } from './schemas/compiled-validators.js';
import { issuesOf, keptErrors, type SchemaIssue } from './schemas/schema-issues.js';
import { fileOf, schemaSet, type SchemaSet } from './schemas/schema-sets.js';

const ASYNC_STATUSES: ReadonlySet<string> = new Set(['submitted', 'working', 'input-required']);

/**
 * Ajv's errors for `body` as a `task` reply of AdCP `version` (of each failed union,
 * the branch meant): empty when it is valid, null when there is no schema for it.
 */
export function responseErrors(task: string, body: Record<string, unknown>, version: string): ErrorObject[] | null {
  const set = schemaSet(version);
  const schemaId = set && responseSchemaId(set, task, body.status);
  if (!set || !schemaId) return null;
  const validate = validatorFor(set, schemaId, { relaxedRoot: true });
  if (validate(body)) return [];
  return keptErrors(validate.errors ?? []);
}

/** The same, as issues a person can read. */
export function responseIssues(task: string, body: Record<string, unknown>, version: string): SchemaIssue[] | null {
  const errors = responseErrors(task, body, version);
  return errors === null ? null : issuesOf(errors);
}

/**
 * Ajv's errors for `body` as the schema at `path` in AdCP `version` (e.g.
 * `core/mcp-webhook-payload.json`), as written; null when the version has no such schema.
 */
export function schemaErrors(path: string, body: unknown, version: string): ErrorObject[] | null {
  const set = schemaSet(version);
  const file = set && fileOf(set, set.idPrefix + path);
  if (!set || !file || !existsSync(file)) return null;
  // Named as the set names its schemas: a path (3.0, 3.1) or a URL (3.2).
  const { $id } = JSON.parse(readFileSync(file, 'utf8')) as { $id?: string };
  const validate = validatorFor(set, $id ?? set.idPrefix + path);
  if (validate(body)) return [];
  return keptErrors(validate.errors ?? []);
}

/** The `$id` a reply with this `status` is checked against (see the module comment). */
function responseSchemaId(set: SchemaSet, task: string, status: unknown): string | undefined {
  const sync = set.responses.get(task);
  if (!sync || typeof status !== 'string' || !ASYNC_STATUSES.has(status)) return sync;
  const variant = sync.replace(/-response\.json$/, `-async-response-${status}.json`);
  const file = variant === sync ? null : fileOf(set, variant);
  return file && existsSync(file) ? variant : sync;
}
