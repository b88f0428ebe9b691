/**
 * The buy each reporting URL names, kept per process so that a fire needs no read
 * before it is authenticated (it was one statement per fire, on every fire), as
 * operation webhook targets are (../webhook-targets.ts).
 *
 * Nothing to invalidate, by construction: what a target holds (the buy's id, tenant,
 * agent, reporting auth and sealed secret) is written once, when the completed create
 * makes the buy (buy-recorder.ts), and never changed; buys are never deleted. So a
 * target is kept from its first read; an unknown token is read again every time (a
 * buy may be made later). The same holds for every instance sharing a database. The
 * secret stays sealed here: it is opened per fire, as before.
 */
import type { ReportingTarget } from '../../store/media-buys-repo.js';

export const REPORTING_TARGETS_MAX = 20_000;

export class ReportingTargets {
  private readonly byToken = new Map<string, Readonly<ReportingTarget>>();

  constructor(
    private readonly read: (token: string) => Promise<ReportingTarget | undefined>,
    private readonly max = REPORTING_TARGETS_MAX,
  ) {}

  async get(token: string): Promise<ReportingTarget | undefined> {
    const kept = this.byToken.get(token);
    if (kept) return kept;
    const target = await this.read(token);
    if (target) {
      // Bounded; the oldest kept goes first.
      if (this.byToken.size >= this.max) this.byToken.delete(this.byToken.keys().next().value!);
      this.byToken.set(token, Object.freeze({ ...target }));
    }
    return target;
  }
}
