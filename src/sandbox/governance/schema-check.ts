/**
 * Validation of governance requests and replies against the AdCP 3.0 JSON
 * schemas the SDK bundles, with the SDK's own validator (Ajv, formats on).
 *
 * Why not `createAdcpServer({ validation: { requests: 'strict' } })`: that
 * rejects a whole `sync_plans` when one plan is bad, while the task answers
 * per plan (`status: error`); it would also reject the one forward-compatible
 * field the sandbox accepts (`target_agent`, see rules.ts); and strict reply
 * validation has no schema for an async (`submitted`) check. So the server
 * runs with validation off and the handlers call this module.
 *
 * The validator itself is the SDK's (../sdk-validator.ts).
 */
import { assertValidAdcpReply, sdkValidator as validator, type ValidatorIssue } from '../sdk-validator.js';
import { errorResult, type ToolResult } from '../wire.js';

export interface SchemaIssue {
  /** JSON pointer into the validated object, e.g. `/plans/1/budget`. */
  pointer: string;
  message: string;
  keyword: string;
}

export type GovernanceTool = 'sync_plans' | 'check_governance' | 'report_plan_outcome' | 'get_plan_audit_logs';

export function requestIssues(tool: GovernanceTool, payload: unknown): SchemaIssue[] {
  const issues = validator.validateRequest(tool, payload).issues;
  // A failed oneOf also reports why each branch failed; its own issue says it
  // better ("exactly one of …"), so the branch detail is left out.
  return issues.filter((i) => !(i.schemaPath ?? '').includes('/oneOf/')).map(readable);
}

/**
 * Replies are checked before they are sent, like the SDK's strict mode: a
 * sandbox reply off the schema is a bug here, never something to ship.
 */
export function assertValidReply(tool: GovernanceTool, body: Record<string, unknown>): void {
  assertValidAdcpReply('sandbox governance', tool, body);
}

/** `/plans/1/budget` → `plans[1].budget`, the field notation AdCP errors use. */
export function pointerToField(pointer: string): string {
  const parts = pointer.split('/').slice(1).filter((p) => p.length > 0);
  return parts.reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '');
}

function readable(i: ValidatorIssue): SchemaIssue {
  const choices = i.keyword === 'oneOf' ? (i.variants ?? []).map((v) => (v.required ?? []).join(' + ')).filter((c) => c) : [];
  const message = choices.length > 0 ? `must have exactly one of: ${choices.join(', ')}` : i.message;
  return { pointer: i.pointer, message, keyword: i.keyword };
}

/** The reply to a request off the schema: VALIDATION_ERROR naming the first problem, all of them in details. */
export function schemaError(tool: GovernanceTool, issues: SchemaIssue[]): ToolResult {
  const first = issues[0];
  const where = first ? pointerToField(first.pointer) : 'idempotency_key';
  const what = first ? first.message : 'is required';
  return errorResult('VALIDATION_ERROR', `${tool}: ${where || 'request'} ${what}`, {
    ...(where && { field: where }),
    details: { issues },
  });
}
