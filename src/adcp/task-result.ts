/**
 * Is a task's terminal `result` the task's response, as the spec defines it?
 *
 * A webhook's `result` is "the full task response" for completed/failed
 * (`core/async-response-data.json`), and a terminal observation is authoritative
 * only once it validates against the originating task's response schema
 * (async-identity-and-convergence: "when a channel cannot be validated … it is
 * not authoritative for publication"). The schemas are the ones the pinned SDK
 * parses responses with (its TOOL_RESPONSE_SCHEMAS), found by name in
 * `@adcp/sdk/schemas` through the generated table (sdk-tables.ts).
 *
 * Cost: that module builds every AdCP schema when loaded (≈0.25 s on a quiet
 * machine, more under load), so it is loaded on the first terminal result that
 * needs checking, not at start — start-up time has a budget and most runs never
 * need it. After that a check is one lookup in a map and one safeParse (a few µs
 * for a typical create_media_buy completion).
 */
import { createRequire } from 'node:module';
import { isTerminal, type AdcpTaskStatus } from '../domain/status.js';
import { SDK_TABLES } from './sdk-tables.js';

export interface ResultIssue {
  /** JSON pointer into the result ("/" for the result itself). */
  path: string;
  message: string;
}

export type TaskResultCheck = { ok: true } | { ok: false; issues: ResultIssue[] };

/** The part of a zod schema used here (the SDK's zod instance is not ours, so no zod types). */
interface ResultSchema {
  safeParse(value: unknown): { success: true } | { success: false; error: { issues: SchemaIssue[] } };
}
interface SchemaIssue {
  code?: string;
  path: PropertyKey[];
  message: string;
  /** invalid_union: the issues of each alternative. */
  errors?: SchemaIssue[][];
}

const OK: TaskResultCheck = { ok: true };
const MAX_ISSUES = 12;

/**
 * Checks `result` against `taskType`'s response schema.
 *
 * - Only terminal results are checked: interim data (working progress, an
 *   input-required reason) is shown, never stored as the operation's result.
 * - The `result` object is checked, never the envelope: a 3.0 create_media_buy
 *   success carries a MediaBuyStatus ("active") in its own `status`, beside the
 *   envelope's task status, and the schema allows exactly that.
 * - failed / canceled / rejected: the task's error shape (`errors[]`), or the
 *   fatal error normalised to the core Error (`adcp_error` with code and message,
 *   as the spec's own extraction vectors send it).
 * - A task type the pinned SDK has no response schema for (a later version's
 *   task, or a reporting event such as media_buy_delivery) is accepted: there is
 *   nothing to check it against, and refusing it would lose a real result.
 */
export function validateTaskResult(taskType: string, result: Record<string, unknown>, status: AdcpTaskStatus = 'completed'): TaskResultCheck {
  if (!isTerminal(status)) return OK;
  const schema = responseSchema(taskType);
  if (!schema) return OK;
  const parsed = schema.safeParse(result);
  if (parsed.success) return OK;
  const issues = flatten(parsed.error.issues, []);
  if (status !== 'completed') {
    if (isCoreError(result.adcp_error)) return OK;
    issues.unshift({ path: '/adcp_error', message: 'absent, or not an AdCP error (code and message)' });
  }
  return { ok: false, issues: issues.slice(0, MAX_ISSUES) };
}

/** Whether the pinned SDK knows a response schema for this task (callers may say so in audit records). */
export function hasResultSchema(taskType: string): boolean {
  return Object.hasOwn(SDK_TABLES.responseSchemas, taskType);
}

// ------------------------------------------------------------ loading, once

interface Loaded {
  byTask: Map<string, ResultSchema | undefined>;
  coreError: ResultSchema;
}
let loaded: Loaded | undefined;

function schemas(): Loaded {
  if (!loaded) {
    // The SDK is CommonJS; requiring it is synchronous, so a check never awaits.
    const mod = createRequire(import.meta.url)('@adcp/sdk/schemas') as Record<string, ResultSchema | undefined>;
    const coreError = mod.ErrorSchema;
    if (!coreError) throw new Error('@adcp/sdk/schemas has no ErrorSchema; regenerate the SDK tables');
    loaded = { byTask: new Map(), coreError };
    for (const [task, name] of Object.entries(SDK_TABLES.responseSchemas)) loaded.byTask.set(task, mod[name]);
  }
  return loaded;
}

/**
 * Loads the SDK's response schemas now rather than at the first reply that needs them
 * (the synchronous require takes 0.25–1.6 s on a busy machine, which would land on that
 * first webhook or poll). `serve` calls it shortly after it is ready.
 */
export function warmResultSchemas(): void {
  schemas();
}

function responseSchema(taskType: string): ResultSchema | undefined {
  // Don't load the module for a task it has nothing for.
  return hasResultSchema(taskType) ? schemas().byTask.get(taskType) : undefined;
}

function isCoreError(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && schemas().coreError.safeParse(value).success;
}

// ------------------------------------------------------------ issues a person can read

/** Union failures are spelled out per alternative ("shape 2 of 3: …"), so a person sees what each shape lacked. */
function flatten(issues: SchemaIssue[], prefix: PropertyKey[], label = ''): ResultIssue[] {
  const out: ResultIssue[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'invalid_union' && issue.errors && issue.errors.length > 0) {
      const n = issue.errors.length;
      issue.errors.forEach((branch, i) => out.push(...flatten(branch, path, `${label}shape ${i + 1} of ${n}: `)));
    } else {
      out.push({ path: pointer(path), message: `${label}${issue.message}` });
    }
    if (out.length >= MAX_ISSUES) break;
  }
  return out;
}

function pointer(path: PropertyKey[]): string {
  return path.length === 0 ? '/' : `/${path.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
}
