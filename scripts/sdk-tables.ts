/** Reads the tables out of the installed @adcp/sdk (see generate-sdk-tables.ts). */
export interface SdkTables {
  sdkVersion: string;
  mutatingTasks: string[];
  notifyingTasks: string[];
  errorRecovery: Record<string, string>;
}

export async function buildSdkTables(): Promise<SdkTables> {
  const sdk = await import('@adcp/sdk');
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
  };
}
