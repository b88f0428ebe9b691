/**
 * Tiny guards for reading untrusted JSON from agents.
 *
 * Replies are returned to callers as the very objects that were parsed, never
 * merged with Object.assign: a seller's `"__proto__"` key must stay an own data
 * property and must not become a prototype (vectors `proto-pollution-*`).
 */
export type JsonObject = Record<string, unknown>;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parse text as JSON, answering only for a JSON object (arrays and scalars are not AdCP payloads). */
export function parseJsonObject(text: string): JsonObject | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return isJsonObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** ISO date-time → epoch ms, or undefined when absent or unparseable. */
export function epochMs(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}
