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
import { KeptByToken } from '../kept-by-token.js';

export const REPORTING_TARGETS_MAX = 20_000;

export class ReportingTargets extends KeptByToken<ReportingTarget> {
  constructor(read: (token: string) => Promise<ReportingTarget | undefined>, max = REPORTING_TARGETS_MAX) {
    // Every target found is final.
    super(read, () => true, max);
  }
}
