/**
 * The SDK's own AdCP JSON-schema validator (Ajv over the schemas bundled with
 * @adcp/sdk, the same code `createAdcpServer` runs in strict mode). It is not a
 * public export of @adcp/sdk 6.11.0, so it is loaded from the package's files:
 * the tools the framework does not validate (task polls, fires we send) are
 * checked with exactly the rules it applies to the ones it does.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface SchemaIssue {
  pointer: string;
  message: string;
  keyword: string;
}

export interface SchemaOutcome {
  valid: boolean;
  issues: SchemaIssue[];
}

interface SdkSchemaValidator {
  validateRequest(tool: string, payload: unknown): SchemaOutcome;
  validateResponse(tool: string, payload: unknown): SchemaOutcome;
}

const require = createRequire(import.meta.url);
// The package's main entry is dist/lib/index.js; the validator sits beside it.
const libDir = dirname(require.resolve('@adcp/sdk'));
const validator = require(join(libDir, 'validation/schema-validator.js')) as SdkSchemaValidator;

/** `tool` in the validator's naming: `tasks_get`, `create_media_buy`, … */
export function checkRequest(tool: string, payload: unknown): SchemaOutcome {
  return validator.validateRequest(tool, payload);
}

export function checkResponse(tool: string, payload: unknown): SchemaOutcome {
  return validator.validateResponse(tool, payload);
}

/** Throws when what we are about to send is off the schema: a bug of this seller, never something to ship. */
export function assertValidResponse(tool: string, payload: unknown): void {
  const outcome = checkResponse(tool, payload);
  if (!outcome.valid) throw new Error(`sdk-seller: its own ${tool} payload is off the AdCP schema: ${describeIssues(outcome.issues)}`);
}

/**
 * The validator says "must NOT have additional properties" without naming them. For such an
 * issue, the keys of the object at its pointer whose removal clears it are named in the message,
 * so a log line says `(target_agent)` rather than leaving the reader to diff the schema.
 */
export function nameExtraProperties(tool: string, payload: unknown, issues: SchemaIssue[]): SchemaIssue[] {
  return issues.map((issue) => {
    if (issue.keyword !== 'additionalProperties') return issue;
    const path = issue.pointer.split('/').slice(1).filter((p) => p !== '').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    const count = (v: unknown): number => checkRequest(tool, v).issues.filter((i) => i.keyword === 'additionalProperties' && i.pointer === issue.pointer).length;
    const before = count(payload);
    const target = path.reduce<unknown>((o, k) => (typeof o === 'object' && o !== null ? (o as Record<string, unknown>)[k] : undefined), payload);
    if (typeof target !== 'object' || target === null || Array.isArray(target)) return issue;
    const extra = Object.keys(target).filter((key) => {
      const copy = structuredClone(payload) as Record<string, unknown>;
      const holder = path.reduce<Record<string, unknown>>((o, k) => o[k] as Record<string, unknown>, copy);
      delete holder[key];
      return count(copy) < before;
    });
    return extra.length > 0 ? { ...issue, message: `${issue.message} (${extra.join(', ')})` } : issue;
  });
}

export function describeIssues(issues: SchemaIssue[]): string {
  return issues.map((i) => `${i.pointer || '/'} ${i.message}`).join('; ');
}
