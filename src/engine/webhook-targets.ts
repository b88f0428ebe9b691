/**
 * The operation each webhook URL names, kept per process so that a delivery needs
 * no read before it is authenticated (a token's target was one statement per
 * delivery, on every delivery).
 *
 * Nothing to invalidate, by construction: what a target holds (id, agent, task
 * type, webhook mode and sealed secret) is written once, when the operation is
 * created (src/engine/operation-builder.ts), and never changed; operations are
 * never deleted. The one exception is the task id, bound once from null by the
 * first reply that names it (src/engine/observation-plan.ts) and never changed
 * after: so a target is kept only once its task id is bound, and read again until
 * then. The same holds for every instance sharing a database.
 */
import type { WebhookTarget } from '../store/operations-repo.js';

export const WEBHOOK_TARGETS_MAX = 20_000;

export class WebhookTargets {
  private readonly byToken = new Map<string, WebhookTarget>();

  constructor(
    private readonly read: (token: string) => Promise<WebhookTarget | undefined>,
    private readonly max = WEBHOOK_TARGETS_MAX,
  ) {}

  async get(token: string): Promise<WebhookTarget | undefined> {
    const kept = this.byToken.get(token);
    if (kept) return kept;
    const target = await this.read(token);
    if (target && target.task_id !== null) {
      // Bounded; the oldest kept goes first.
      if (this.byToken.size >= this.max) this.byToken.delete(this.byToken.keys().next().value!);
      this.byToken.set(token, Object.freeze({ ...target }));
    }
    return target;
  }
}
