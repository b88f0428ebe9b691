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
 *
 * The verdict comes from the same schemas with the SDK validator's Ajv options,
 * compiled once per installation and kept (src/adcp/request-schema.ts): the SDK's
 * own validator compiles its bundled schema anew in every process, 0.2–0.8 s a tool,
 * which every test process starting a sandbox paid again. Its issues are worded as
 * the SDK words them (`formatIssue` in its schema-validator). That the two agree is
 * what the tests against the SDK-built seller (test/helpers/sdk-seller) keep checking.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { adcpError } from '@adcp/sdk/server';
import type { ErrorObject } from 'ajv';
import { requestErrors } from '../adcp/request-schema.js';
import type { ValidatorIssue } from './sdk-validator.js';
import { isPlainObject, type ToolResult } from './wire.js';

const require = createRequire(import.meta.url);
const sdkDir = dirname(require.resolve('@adcp/sdk/package.json'));
const schemaErrors = require(join(sdkDir, 'dist/lib/validation/schema-errors.js')) as {
  buildAdcpValidationErrorPayload(tool: string, side: 'request' | 'response', issues: ValidatorIssue[], options: { exposeSchemaPath?: boolean; rootSchemaId?: string }): Parameters<typeof adcpError>[1];
};

/**
 * The schema a tool's request is checked against when the version has none of
 * its own name. The task tools' 3.0 names are `tasks/get` and `tasks/list`; the
 * 3.0 sandbox also answers `tasks_get` and the 3.1 names, checked against the
 * same (open) 3.0 schemas; 3.1 has schemas for its names (`get_task_status`,
 * `list_tasks`). `sandbox_respond` is ours alone and has none.
 */
const SCHEMA_OF: Readonly<Record<string, string>> = {
  tasks_get: 'tasks/get',
  get_task_status: 'tasks/get',
  list_tasks: 'tasks/list',
};

/** Tools without an AdCP schema: nothing to check them against. */
const UNCHECKED: ReadonlySet<string> = new Set(['sandbox_respond']);

export interface RequestCheck {
  valid: boolean;
  issues: ValidatorIssue[];
  /** The refusal to send when the request is not valid. */
  refusal?: ToolResult;
}

export function checkRequest(tool: string, args: Record<string, unknown>, version = '3.0'): RequestCheck {
  if (UNCHECKED.has(tool)) return { valid: true, issues: [] };
  const alias = SCHEMA_OF[tool];
  const errors = requestErrors(tool, args, version) ?? (alias !== undefined ? requestErrors(alias, args, version) : null) ?? [];
  if (errors.length === 0) return { valid: true, issues: [] };
  const issues = errors.map(sdkWorded);
  const payload = schemaErrors.buildAdcpValidationErrorPayload(tool, 'request', issues, { exposeSchemaPath: false });
  const refusal = adcpError('VALIDATION_ERROR', payload) as unknown as ToolResult;
  echoContext(refusal, args.context);
  return { valid: false, issues, refusal };
}

/** An Ajv error as the SDK's validator reports it: the missing property in the pointer, an enum's values in the message. */
function sdkWorded(e: ErrorObject): ValidatorIssue {
  const params = e.params as Record<string, unknown>;
  const missing = e.keyword === 'required' && typeof params.missingProperty === 'string' ? `/${params.missingProperty}` : '';
  const message =
    e.keyword === 'enum' && Array.isArray(params.allowedValues)
      ? `must be one of: ${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`
      : (e.message ?? 'validation failed');
  return { pointer: `${e.instancePath}${missing}` || '/', message, keyword: e.keyword, schemaPath: e.schemaPath };
}

/** The caller's `context` is echoed on every reply, refusals included, as the SDK's server does. */
function echoContext(result: ToolResult, context: unknown): void {
  if (!isPlainObject(context) || 'context' in result.structuredContent) return;
  result.structuredContent = { ...result.structuredContent, context };
  result.content = [{ type: 'text', text: JSON.stringify(result.structuredContent) }];
}
