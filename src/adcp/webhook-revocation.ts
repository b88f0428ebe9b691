/**
 * Revocation lists of sellers' webhook signing keys: one held in memory (set by
 * a poller or a test) and one fetched from the seller's URL by the SDK. A list
 * past its grace is `stale`, and verification then fails closed.
 */
import { secondsClock, signing, type SigningModule } from './sdk-signing.js';
import type { RevocationSource, RevocationState } from './webhook-signature.js';


export interface RevocationListOptions {
  revokedKids: Iterable<string>;
  /** The list's `next_update`, epoch ms. */
  nextUpdateMs: number;
  /** How often we poll the list; the grace after next_update is 4× this (AdCP spec, webhooks). */
  pollIntervalMs: number;
}

/**
 * A revocation list held in memory (loaded by a poller, or set up by tests).
 * `replace` swaps in a fresh snapshot after each successful poll.
 */
export class InMemoryRevocationList implements RevocationSource {
  private revoked = new Set<string>();
  private staleAtMs = 0;

  constructor(options: RevocationListOptions) {
    this.replace(options);
  }

  replace(options: RevocationListOptions): void {
    this.revoked = new Set(options.revokedKids);
    this.staleAtMs = options.nextUpdateMs + 4 * options.pollIntervalMs;
  }

  async check(keyid: string, nowMs: number): Promise<RevocationState> {
    if (nowMs > this.staleAtMs) return 'stale';
    return this.revoked.has(keyid) ? 'revoked' : 'ok';
  }
}

export interface UrlRevocationOptions {
  allowPrivateNetwork?: boolean;
  /** Seconds after next_update before the cached list counts as stale. */
  graceSeconds?: number;
  expectedIssuer?: string;
  now?: () => number;
}

/** A revocation list fetched (lazily, cached, SSRF-checked) from the seller's URL by the SDK. */
export function revocationListFromUrl(url: string, options: UrlRevocationOptions = {}): RevocationSource {
  type Store = InstanceType<SigningModule['HttpsRevocationStore']>;
  let store: Promise<Store> | undefined;
  const make = async () =>
    new (await signing()).HttpsRevocationStore(url, {
      allowPrivateIp: options.allowPrivateNetwork ?? false,
      ...(options.graceSeconds !== undefined && { graceSeconds: options.graceSeconds }),
      ...(options.expectedIssuer !== undefined && { expectedIssuer: options.expectedIssuer }),
      ...(options.now && { now: secondsClock(options.now) }),
    });
  return {
    async check(keyid: string): Promise<RevocationState> {
      const s = await (store ??= make());
      try {
        return (await s.isRevoked(keyid)) ? 'revoked' : 'ok';
      } catch (err) {
        if (err instanceof (await signing()).RequestSignatureError && (err as { code?: string }).code === 'request_signature_revocation_stale') return 'stale';
        throw err;
      }
    },
  };
}
