/**
 * Header lookup for the webhook verifiers. Names are matched case-insensitively
 * (Node lowercases them, tests and other servers may not).
 */
export type HeaderBag = Record<string, string | string[] | undefined>;

/**
 * The single value of a header: undefined when absent, null when it was sent
 * more than once. Authentication headers must be unambiguous, so callers treat
 * null as malformed instead of guessing which copy counts.
 */
export function singleHeader(headers: HeaderBag, name: string): string | undefined | null {
  const wanted = name.toLowerCase();
  let found: string | undefined;
  let seen = 0;
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() !== wanted) continue;
    const value = headers[key];
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) {
      if (typeof v !== 'string') return null;
      seen++;
      found = v;
    }
  }
  if (seen === 0) return undefined;
  return seen === 1 ? found : null;
}

export function hasHeader(headers: HeaderBag, name: string): boolean {
  return singleHeader(headers, name) !== undefined;
}
