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
import { KeptByToken } from './kept-by-token.js';

export const WEBHOOK_TARGETS_MAX = 20_000;

export class WebhookTargets extends KeptByToken<WebhookTarget> {
  constructor(read: (token: string) => Promise<WebhookTarget | undefined>, max = WEBHOOK_TARGETS_MAX) {
    super(read, (target) => target.task_id !== null, max);
  }
}
