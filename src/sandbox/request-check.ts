/**
 * Every request the sandbox seller takes is checked against the AdCP JSON
 * Schema of the version it speaks, and refused as an SDK-built seller refuses
 * it: `VALIDATION_ERROR` (recovery `correctable`) built by the SDK's own payload
 * builder, naming the first pointer and listing every issue.
 *
 * Why here and not `createAdcpServer({ validation: { requests: 'strict' } })`:
 * the SDK validates only the tools it registers itself; ours are custom tools
 * (their behaviour is the point of the sandbox), which it passes through
 * unchecked. A sandbox more lenient than real sellers lets a whole class of
 * wire mistakes through every test, so each custom tool's request goes through
 * this check first, on MCP and A2A alike (both reach the same handlers).
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { adcpError } from '@adcp/sdk/server';
import { sdkValidator, type ValidatorIssue } from './sdk-validator.js';
import { isPlainObject, type ToolResult } from './wire.js';

const require = createRequire(import.meta.url);
const sdkDir = dirname(require.resolve('@adcp/sdk/package.json'));
const schemaErrors = require(join(sdkDir, 'dist/lib/validation/schema-errors.js')) as {
  buildAdcpValidationErrorPayload(tool: string, side: 'request' | 'response', issues: ValidatorIssue[], options: { exposeSchemaPath?: boolean; rootSchemaId?: string }): Parameters<typeof adcpError>[1];
};

/**
 * The schema each tool's request is checked against, by the name the SDK's
 * validator knows it under. The task tools' 3.0 names are `tasks/get` and
 * `tasks/list`; the sandbox also answers their 3.1 names, checked against the
 * same (open) 3.0 schemas. `sandbox_respond` is ours alone and has none.
 */
const SCHEMA_OF: Readonly<Record<string, string>> = {
  'tasks/get': 'tasks_get',
  tasks_get: 'tasks_get',
  get_task_status: 'tasks_get',
  'tasks/list': 'tasks_list',
  list_tasks: 'tasks_list',
};

/** Tools without an AdCP schema: nothing to check them against. */
const UNCHECKED: ReadonlySet<string> = new Set(['sandbox_respond']);

export interface RequestCheck {
  valid: boolean;
  issues: ValidatorIssue[];
  /** The refusal to send when the request is not valid. */
  refusal?: ToolResult;
}

export function checkRequest(tool: string, args: Record<string, unknown>): RequestCheck {
  if (UNCHECKED.has(tool)) return { valid: true, issues: [] };
  const schemaName = SCHEMA_OF[tool] ?? tool;
  const outcome = sdkValidator.validateRequest(schemaName, args) as { valid: boolean; issues: ValidatorIssue[]; schemaId?: string };
  if (outcome.valid) return { valid: true, issues: [] };
  const payload = schemaErrors.buildAdcpValidationErrorPayload(tool, 'request', outcome.issues, { exposeSchemaPath: false, rootSchemaId: outcome.schemaId });
  const refusal = adcpError('VALIDATION_ERROR', payload) as unknown as ToolResult;
  echoContext(refusal, args.context);
  return { valid: false, issues: outcome.issues, refusal };
}

/** The caller's `context` is echoed on every reply, refusals included, as the SDK's server does. */
function echoContext(result: ToolResult, context: unknown): void {
  if (!isPlainObject(context) || 'context' in result.structuredContent) return;
  result.structuredContent = { ...result.structuredContent, context };
  result.content = [{ type: 'text', text: JSON.stringify(result.structuredContent) }];
}
