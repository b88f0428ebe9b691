/** Reads the tables out of the installed @adcp/sdk (see generate-sdk-tables.ts). */
export interface SdkTables {
  sdkVersion: string;
  mutatingTasks: string[];
  notifyingTasks: string[];
  errorRecovery: Record<string, string>;
  /**
   * Task → the name under which `@adcp/sdk/schemas` exports that task's response
   * schema (the one the SDK itself parses responses with, TOOL_RESPONSE_SCHEMAS),
   * so the orchestrator can load the schemas module alone, lazily, by name.
   */
  responseSchemas: Record<string, string>;
}

export async function buildSdkTables(): Promise<SdkTables> {
  const sdk = await import('@adcp/sdk');
  const schemaExports = (await import('@adcp/sdk/schemas')) as Record<string, unknown>;
  const schemas = sdk.TOOL_REQUEST_SCHEMAS as Record<string, { shape?: Record<string, unknown> } | undefined>;
  const names = Object.keys(schemas).sort();
  const errorRecovery: Record<string, string> = {};
  for (const [code, info] of Object.entries(sdk.STANDARD_ERROR_CODES as Record<string, { recovery?: string }>).sort(([a], [b]) => a.localeCompare(b))) {
    if (info?.recovery) errorRecovery[code] = info.recovery;
  }
  return {
    sdkVersion: sdk.LIBRARY_VERSION,
    mutatingTasks: names.filter((n) => sdk.isMutatingTask(n)),
    notifyingTasks: names.filter((n) => schemas[n]?.shape?.push_notification_config !== undefined),
    errorRecovery,
    responseSchemas: responseSchemaExports(sdk.TOOL_RESPONSE_SCHEMAS as Record<string, unknown>, schemaExports),
  };
}

/**
 * The export of `@adcp/sdk/schemas` that is the very schema TOOL_RESPONSE_SCHEMAS
 * names for a task; failing that (a few tasks use a schema only the root module
 * has, e.g. a stricter sync_creatives), the generated `<Task>ResponseSchema` of the
 * same task when the schemas module exports one. Tasks with neither are left out.
 */
function responseSchemaExports(byTask: Record<string, unknown>, schemaExports: Record<string, unknown>): Record<string, string> {
  const nameOf = new Map<unknown, string>();
  for (const [name, value] of Object.entries(schemaExports)) if (name.endsWith('Schema') && !nameOf.has(value)) nameOf.set(value, name);
  const out: Record<string, string> = {};
  for (const task of Object.keys(byTask).sort()) {
    const conventional = `${task.split('_').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')}ResponseSchema`;
    const name = nameOf.get(byTask[task]) ?? (conventional in schemaExports ? conventional : undefined);
    if (name) out[task] = name;
  }
  return out;
}
