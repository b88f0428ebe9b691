/**
 * Which fields of an AdCP request carry a credential. In the 3.0 request schemas
 * every secret sits under one of two names: `credentials` (the HMAC or Bearer
 * secret of `push_notification_config`, `reporting_webhook`, `artifact_webhook`,
 * a governance agent's `authentication`, an asset's service-account object) and
 * `token` (a reporting webhook's validation token, an asset's OAuth bearer token).
 *
 * The rule is by name at any depth, not by schema path: a new task or an
 * extension that nests one of them elsewhere is covered without a code change,
 * and a false positive (a harmless field called `token`) only costs it being
 * stored encrypted and shown as "[redacted]". Pure: the engine seals by it, the
 * adapter scrubs by it, and the operation's JSON (API, notifications) hides by it.
 */
const isJsonObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What a secret is shown as, wherever one would have been. */
export const REDACTED = '[redacted]';

const CREDENTIAL_FIELDS: ReadonlySet<string> = new Set(['credentials', 'token']);

/** Shorter values are not scrubbed from agents' replies: replacing "" or "x" everywhere would garble them, and no AdCP credential is that short. */
export const MIN_SCRUBBED_LENGTH = 8;

export function isCredentialField(name: string): boolean {
  return CREDENTIAL_FIELDS.has(name);
}

/** False only when JSON `text` surely has no credential field (none of the names, and no `\u` escape that could spell one). */
export function mayHoldCredentialField(text: string): boolean {
  return text.includes('\\u') || [...CREDENTIAL_FIELDS].some((name) => text.includes(name));
}

/** Every string inside a credential field of `value` (a credential may itself be an object, e.g. service-account keys). */
export function credentialValues(value: unknown): string[] {
  const out: string[] = [];
  const collectAll = (v: unknown): void => {
    if (typeof v === 'string') {
      if (v.length >= MIN_SCRUBBED_LENGTH) out.push(v);
    } else if (Array.isArray(v)) v.forEach(collectAll);
    else if (isJsonObject(v)) Object.values(v).forEach(collectAll);
  };
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (isJsonObject(v)) {
      for (const [k, child] of Object.entries(v)) {
        if (isCredentialField(k)) collectAll(child);
        else walk(child);
      }
    }
  };
  walk(value);
  return out;
}

/**
 * A stored request as it is shown (API answers, notifications): every credential
 * field "[redacted]", sealed or not, and the webhook URLs' path tokens hidden (the
 * operation's and the reporting webhook's: only the seller needs those URLs). Needs no key.
 */
export function redactedRequest(stored: string, webhookToken: string | null, ...moreTokens: Array<string | null | undefined>): unknown {
  // A token is base64url, spelled the same in the JSON text as in the value: replaced in the text.
  let text = stored;
  for (const token of [webhookToken, ...moreTokens]) if (token) text = text.split(token).join(REDACTED);
  // A reviver costs about four plain parses; most bodies (RFC 9421 webhooks) have no credential field.
  if (!mayHoldCredentialField(text)) return JSON.parse(text);
  return JSON.parse(text, (key, value: unknown) => (isCredentialField(key) ? REDACTED : value));
}

/** `value` (request params, e.g. a person's corrections) with every credential field "[redacted]": for records that are shown. */
export function redactedCredentials<T>(value: T): T {
  if (value === undefined) return value;
  return JSON.parse(JSON.stringify(value), (key, v: unknown) => (isCredentialField(key) ? REDACTED : v)) as T;
}
