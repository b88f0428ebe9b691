/**
 * Rows a webhook URL's token names, kept per process once they are final, so that a
 * delivery needs no read before it is authenticated. What "final" means, and why nothing
 * then needs invalidating, is each kind's own (webhook-targets.ts, media-buys/reporting-targets.ts);
 * a row not final yet, or a token naming nothing, is read again every time.
 * Bounded; the oldest kept goes first. Kept rows are frozen copies.
 */
import { setBounded } from '../bounded-map.js';

export class KeptByToken<T extends object> {
  private readonly byToken = new Map<string, Readonly<T>>();

  constructor(
    private readonly read: (token: string) => Promise<T | undefined>,
    /** Whether a row read is final (kept from now on). */
    private readonly isFinal: (row: T) => boolean,
    private readonly max: number,
  ) {}

  async get(token: string): Promise<T | undefined> {
    const kept = this.byToken.get(token);
    if (kept) return kept;
    const row = await this.read(token);
    if (row && this.isFinal(row)) {
      setBounded(this.byToken, token, Object.freeze({ ...row }), this.max);
    }
    return row;
  }
}
