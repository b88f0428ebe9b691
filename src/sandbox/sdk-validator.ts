/**
 * The SDK's AdCP 3.0 JSON-schema validator (Ajv, formats on), shared by the
 * sandbox agents to check their requests and replies.
 *
 * The validator is not a public export of @adcp/sdk 6.11.0 (pinned), so it is
 * loaded from the package's files by path. If a later SDK moves it, this is
 * the one place to change.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface ValidatorIssue {
  /** JSON pointer into the validated object, e.g. `/plans/1/budget`. */
  pointer: string;
  message: string;
  keyword: string;
  schemaPath?: string;
  variants?: Array<{ required?: string[] }>;
}

export interface ValidationOutcome {
  valid: boolean;
  issues: ValidatorIssue[];
}

export interface SdkValidator {
  validateRequest(tool: string, payload: unknown): ValidationOutcome;
  validateResponse(tool: string, payload: unknown): ValidationOutcome;
}

const require = createRequire(import.meta.url);
const sdkDir = dirname(require.resolve('@adcp/sdk/package.json'));
export const sdkValidator = require(join(sdkDir, 'dist/lib/validation/schema-validator.js')) as SdkValidator;

/**
 * Replies are checked before they are sent, like the SDK's strict mode: a
 * sandbox reply off the schema is a bug here, never something to ship.
 */
export function assertValidAdcpReply(agent: string, tool: string, body: Record<string, unknown>): void {
  const outcome = sdkValidator.validateResponse(tool, body);
  if (!outcome.valid) {
    const detail = outcome.issues.map((i) => `${i.pointer} ${i.message}`).join('; ');
    throw new Error(`${agent} reply to ${tool} is off the AdCP schema: ${detail}`);
  }
}
