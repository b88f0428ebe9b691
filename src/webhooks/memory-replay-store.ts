/**
 * In-memory NonceReplayStore, for tests and single-process sandboxes only:
 * the spec requires the replay cache to be shared by every receiving process
 * (AdCP spec, webhooks), which memory in one process is not.
 *
 * Caps follow the spec: 100,000 live nonces per keyid, and a total cap; a key
 * over its cap gets `rate_abuse` instead of evicting live entries (silent
 * eviction would let an attacker flush a nonce and replay it).
 */
import type { NonceInsertResult, NonceReplayStore } from '../adcp/webhook-signature.js';

export interface MemoryReplayStoreOptions {
  maxPerKeyid?: number;
  maxTotal?: number;
}

export class InMemoryNonceReplayStore implements NonceReplayStore {
  readonly maxPerKeyid: number;
  readonly maxTotal: number;
  /** keyid → (nonce → expiresAtMs), each inner map in insertion order. */
  private readonly byKeyid = new Map<string, Map<string, number>>();
  private total = 0;

  constructor(options: MemoryReplayStoreOptions = {}) {
    this.maxPerKeyid = options.maxPerKeyid ?? 100_000;
    this.maxTotal = options.maxTotal ?? 10_000_000;
  }

  async isAtCapacity(keyid: string, nowMs: number): Promise<boolean> {
    return this.liveCount(keyid, nowMs) >= this.maxPerKeyid || this.total >= this.maxTotal;
  }

  async has(keyid: string, nonce: string, nowMs: number): Promise<boolean> {
    const expiresAt = this.byKeyid.get(keyid)?.get(nonce);
    return expiresAt !== undefined && expiresAt > nowMs;
  }

  async checkAndInsert(keyid: string, nonce: string, expiresAtMs: number, nowMs: number): Promise<NonceInsertResult> {
    // Everything below is synchronous, so two concurrent calls cannot both see
    // the nonce as absent: that is what makes this insert atomic.
    const entries = this.byKeyid.get(keyid);
    const existing = entries?.get(nonce);
    if (existing !== undefined && existing > nowMs) return 'replayed';
    if (this.liveCount(keyid, nowMs) >= this.maxPerKeyid || this.total >= this.maxTotal) return 'rate_abuse';
    const map = entries ?? new Map<string, number>();
    if (!entries) this.byKeyid.set(keyid, map);
    if (existing !== undefined) {
      map.delete(nonce); // expired entry: re-append so insertion order stays ≈ expiry order
      this.total--;
    }
    map.set(nonce, expiresAtMs);
    this.total++;
    return 'fresh';
  }

  /**
   * Live entries for a key, pruning expired ones from the front. Entries are
   * appended in arrival order and TTLs vary by at most a minute, so the front
   * is (nearly) the oldest; an entry a little out of order is kept a little
   * longer, which errs on the safe side.
   */
  private liveCount(keyid: string, nowMs: number): number {
    const map = this.byKeyid.get(keyid);
    if (!map) return 0;
    for (const [nonce, expiresAt] of map) {
      if (expiresAt > nowMs) break;
      map.delete(nonce);
      this.total--;
    }
    if (map.size === 0) this.byKeyid.delete(keyid);
    return map.size;
  }
}
