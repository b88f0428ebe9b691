/**
 * The replay store one RFC 9421 verification sees: the shared cache answers the
 * verifier's cheap pre-checks (cap, already seen) before any crypto, but the
 * authoritative insert, which the verifier makes only after the signature and
 * digest are good, is held back and handed to the engine, which makes it first in
 * the delivery's own transaction: one commit for the nonce and the delivery, and
 * a replay racing its original still loses there, atomically.
 */
import type { NonceInsertResult, NonceReplayStore } from '../adcp/webhook-signature.js';
import type { PendingNonce } from '../engine/webhook-ingest.js';

export class DeferredNonce implements NonceReplayStore {
  /** Set once the signature verified: the insert still to make. */
  pending: PendingNonce | undefined;

  constructor(private readonly shared: NonceReplayStore) {}

  isAtCapacity(keyid: string, nowMs: number): Promise<boolean> {
    return this.shared.isAtCapacity(keyid, nowMs);
  }

  has(keyid: string, nonce: string, nowMs: number): Promise<boolean> {
    return this.shared.has(keyid, nonce, nowMs);
  }

  async checkAndInsert(keyid: string, nonce: string, expiresAtMs: number, nowMs: number): Promise<NonceInsertResult> {
    this.pending = { keyid, nonce, expiresAtMs, nowMs };
    return 'fresh';
  }
}
