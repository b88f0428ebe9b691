/**
 * The SDK's spec-derived tables, read from a file generated from the pinned SDK
 * (scripts/generate-sdk-tables.ts) instead of importing the SDK's root module,
 * which would add seconds to every start. A unit test keeps the file in step
 * with the installed SDK.
 */
import { readFileSync } from 'node:fs';

export interface SdkTables {
  sdkVersion: string;
  mutatingTasks: string[];
  notifyingTasks: string[];
  errorRecovery: Record<string, string>;
  /** Task → its response schema's export name in `@adcp/sdk/schemas` (see task-result.ts). */
  responseSchemas: Record<string, string>;
}

export const SDK_TABLES: SdkTables = JSON.parse(readFileSync(new URL('./sdk-tables.generated.json', import.meta.url), 'utf8'));
