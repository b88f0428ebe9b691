/**
 * The tenant's own rule that holds a buy for a person before anything is sent
 * (docs/ARCHITECTURE.md, People in the loop `spend_approval`): asked for per buy (`approval: "required"`),
 * or by the tenant's `approval_over` threshold, which applies to every
 * create_media_buy the tenant starts, however it is started. The request gets the
 * tenant's expiry for spend approvals (settings `input_expiry.spend_approval`).
 */
import { spendApprovalRequest, spendHold, type InputRequest } from '../domain/input-request.js';
import { withExpiry } from '../domain/input-timers.js';
import type { Store } from '../store/index.js';
import type { Clock } from './clock.js';

export class SpendApproval {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /** The request a person must answer before this task is sent, or undefined when it may go at once. */
  async holdFor(tenantId: string, task: string, params: Record<string, unknown>, approval?: 'required'): Promise<InputRequest | undefined> {
    if (task !== 'create_media_buy') return undefined;
    // forTenantIn: the compiled read (this runs with every create).
    const settings = await this.store.settings.forTenantIn(tenantId);
    const reason = spendHold(params, approval, settings.approval_over);
    // Stamped when the request is made: a later change of the settings does not move it.
    return reason ? withExpiry(spendApprovalRequest(reason, this.clock.now()), settings.input_expiry) : undefined;
  }
}
