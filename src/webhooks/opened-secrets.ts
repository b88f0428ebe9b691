/**
 * Webhook secrets opened from their sealed form, kept in this process's memory only
 * (never logged, never stored opened): an operation or a buy gets many deliveries, and an
 * AES-GCM open per delivery showed in the ingest profile. Keyed by the sealed form, so a
 * changed secret is a new entry. Bounded; the oldest opened goes first. Both webhook
 * receivers (operations and reporting fires) keep theirs here.
 */
import type { AuthResult } from './result.js';
import { checkHmacSecret, verifyHmacWebhook, type HmacRequest } from './hmac.js';
import { setBounded } from '../bounded-map.js';

export const OPENED_SECRETS_MAX = 10_000;

export type HmacSecretStrength = ReturnType<typeof checkHmacSecret>;

export interface OpenedSecret {
  readonly plain: string;
  /**
   * Whether the secret is strong enough to authenticate an HMAC delivery, judged once:
   * the verdict cannot change while the secret does not.
   */
  hmacStrength(): HmacSecretStrength;
  /**
   * Verifies an HMAC delivery with this secret, failing closed on a weak one
   * (webhook-hmac-sha256.json secret_rejection_vectors): the engine only generates 32
   * random bytes, but a row holding a short or no-entropy secret (older code, a hand edit)
   * must not authenticate deliveries. Found by the route-level vector tests, which got 200
   * for a delivery MACed with a 31-byte secret. `onWeak` hears why (for the caller's log).
   */
  verifyHmac(request: HmacRequest, now: () => number, onWeak: (message: string) => void): AuthResult;
}

class Opened implements OpenedSecret {
  private strength: HmacSecretStrength | undefined;

  constructor(readonly plain: string) {}

  hmacStrength(): HmacSecretStrength {
    return (this.strength ??= checkHmacSecret(this.plain));
  }

  verifyHmac(request: HmacRequest, now: () => number, onWeak: (message: string) => void): AuthResult {
    const strength = this.hmacStrength();
    if (!strength.ok) {
      onWeak(strength.message);
      return { ok: false, code: 'webhook_signature_invalid', message: 'the secret registered for this webhook is not acceptable' };
    }
    return verifyHmacWebhook(request, { secret: this.plain }, now);
  }
}

export class OpenedSecrets {
  private readonly bySealed = new Map<string, Opened>();

  constructor(
    /** Opens one sealed secret (and reads it, where it was sealed as JSON text). */
    private readonly open: (sealed: string) => string,
    private readonly max = OPENED_SECRETS_MAX,
  ) {}

  get(sealed: string): OpenedSecret {
    let opened = this.bySealed.get(sealed);
    if (opened === undefined) {
      opened = new Opened(this.open(sealed));
      setBounded(this.bySealed, sealed, opened, this.max);
    }
    return opened;
  }
}
