/** Stored JSON text read for display: a value that does not parse shows as the fallback, never as an error page. */
export function parseJsonOr<T>(text: string | null, fallback: T): T {
  if (text === null) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}
