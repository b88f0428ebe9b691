/**
 * How a request is kept in `operations.request_body`: as the JSON that is sent,
 * except that the value of every credential field (see domain/credential-fields.ts:
 * our per-operation HMAC/Bearer webhook secret, and any credential the caller put
 * in, e.g. a reporting webhook's) is replaced, where it stands, by
 * `{"$sealed": "<AES-256-GCM ciphertext of its JSON>"}`.
 *
 * Why seal the credentials in place and not encrypt the whole body: the body is
 * read for much more than sending it. The API shows it, the idempotency check
 * compares it, the natural-key lookup reads the account, flight and packages,
 * operators query it with SQL, and benchmarks seed it; all of that needs no
 * secret and keeps working on readable JSON without the key, while only the
 * bytes that are secret become ciphertext. And because a sealed value stands
 * exactly where the credential stood, opening it rebuilds an object with the
 * same keys in the same order, so `JSON.stringify` of the opened request, which
 * is what goes on the wire, is byte for byte the first send's: a resend after
 * a crash is identical, as the seller's idempotency check needs.
 *
 * At a credential field a stored value is always sealed (sealing does not look
 * at the value), so a caller's own `{"$sealed": …}` there cannot be mistaken for
 * ours; elsewhere `$sealed` means nothing. A credential found in clear (a row
 * stored before this existed) is sent as it is.
 */
import { isCredentialField } from '../domain/credential-fields.js';
import type { SecretBox } from '../store/secret-box.js';

const SEALED = '$sealed';

interface SealedValue {
  [SEALED]: string;
}

function isSealedValue(v: unknown): v is SealedValue {
  return (
    typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 1 && typeof (v as Record<string, unknown>)[SEALED] === 'string'
  );
}

export class RequestSealer {
  constructor(private readonly box: SecretBox) {}

  /** The text to store: the request as it will be sent, its credentials sealed. */
  seal(request: unknown): string {
    return JSON.stringify(request, (key, value: unknown) => {
      if (key === '' || !isCredentialField(key)) return value;
      const text = JSON.stringify(value);
      return text === undefined ? value : ({ [SEALED]: this.box.seal(text) } satisfies SealedValue);
    });
  }

  /** The request to send, credentials opened in place. Throws if a sealed value does not open under our key. */
  open(stored: string): Record<string, unknown> {
    // Sealed values are only ever written by seal(), whose JSON spells the key plainly.
    if (!stored.includes(`"${SEALED}"`)) return JSON.parse(stored);
    return JSON.parse(stored, (key, value: unknown) => (isCredentialField(key) && isSealedValue(value) ? JSON.parse(this.box.open(value[SEALED])) : value));
  }

  /** `value` (a request, or request params a person gave) with its credentials sealed in place, to keep inside other stored JSON. */
  sealedIn<T>(value: T): T {
    return value === undefined ? value : (JSON.parse(this.seal(value)) as T);
  }

  /** The inverse of sealedIn. */
  openedIn<T>(value: T): T {
    return value === undefined ? value : (this.open(JSON.stringify(value)) as T);
  }
}
