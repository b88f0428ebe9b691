/**
 * Replies the sandbox seller keeps back (product `sandbox_held_reply`): the call
 * has run, the caller waits. A test decides when the wait ends, so a send can be
 * caught in flight by a kill or a pause without guessing at timings.
 */
import type { ServerResponse } from 'node:http';

/** How a held reply ended: sent as the real reply, as an HTTP 500, or the caller went away first. */
export type HeldOutcome = 'reply' | 'error' | 'gone';

export class HeldReplies {
  private readonly waiting = new Set<(how: HeldOutcome) => void>();

  /** Resolves when released, or with 'gone' as soon as the caller's connection closes. */
  hold(res: ServerResponse): Promise<HeldOutcome> {
    return new Promise((resolve) => {
      const done = (how: HeldOutcome) => {
        if (!this.waiting.delete(done)) return;
        res.off('close', onClose);
        resolve(how);
      };
      const onClose = () => done('gone');
      res.once('close', onClose);
      this.waiting.add(done);
    });
  }

  /** Ends every held reply the given way; returns how many there were. */
  release(how: Exclude<HeldOutcome, 'gone'>): number {
    const all = [...this.waiting];
    for (const done of all) done(how);
    return all.length;
  }

  get size(): number {
    return this.waiting.size;
  }
}
