/**
 * Starting governed work: what is checked before anything is stored or sent
 * (a clear 4xx otherwise), and the operation input a governed spend becomes.
 *
 * - only spend-committing tasks (`create_media_buy`, `update_media_buy`,
 *   `activate_signal`, `acquire_rights`: domain/governed-tasks.ts) are governed;
 * - the target must be a seller, `governance.agent_id` a governance agent;
 * - the plan must be one the agent accepted (`POST /v1/plans`); an unknown plan,
 *   one the agent answered only with `error`, or one still syncing is refused;
 * - the webhook must be RFC 9421 (or none): the intent check carries the exact
 *   seller arguments, `push_notification_config` included, to the governance
 *   agent, and a legacy HMAC or Bearer secret in it would be disclosed;
 * - `plan_id` is set from the governance (3.0 wants it on a governed buy); a
 *   different one in the request is refused, and `governance_context` is ours;
 * - at a seller that declares `media_buy.governance_aware`, a request for an account
 *   starts by registering the governance agent there (`sync_governance`,
 *   domain/governance-sync.ts): refused at once when its URL cannot be registered
 *   (not https); not registered, and said so, when the agent has no seller_credentials.
 */
import type { AgentRow, Store } from '../../store/index.js';
import { GOVERNED_TASKS, initialState, type GovernedState } from '../../domain/governed-flow.js';
import { sellerSyncNeed } from '../../domain/governance-sync.js';
import type { Clock } from '../clock.js';
import { EngineError } from '../errors.js';
import type { WebhookMode } from '../operation-builder.js';
import type { PlanBook } from './plan-book.js';

export interface GovernanceRequest {
  agent_id: string;
  plan_id: string;
  /** Apply conditions that state their values at once instead of asking a person. */
  apply_conditions?: boolean;
}

export interface GovernedInput {
  params: Record<string, unknown>;
  governance: GovernedState;
  seller: AgentRow;
}

export class GovernanceGuard {
  constructor(
    private readonly store: Store,
    private readonly plans: PlanBook,
    private readonly clock: Clock,
    /** Our public URL: the checks' `caller`. */
    private readonly caller: () => string,
  ) {}

  async prepare(tenantId: string, sellerAgentId: string, task: string, params: Record<string, unknown>, governance: GovernanceRequest, webhook?: WebhookMode): Promise<GovernedInput> {
    if (!GOVERNED_TASKS.has(task)) {
      throw new EngineError('governance_not_applicable', `${task} is not a spend-commit task governed here: only ${[...GOVERNED_TASKS].join(', ')} are`, 400);
    }
    if (webhook === 'hmac' || webhook === 'bearer') {
      throw new EngineError(
        'webhook_mode_not_allowed',
        `a governed request goes to the governance agent in full, webhook configuration included: a ${webhook} secret would be disclosed to it; use rfc9421 (the default) or none`,
        400,
      );
    }
    if ('governance_context' in params) throw new EngineError('reserved_params', 'governance_context is set by the orchestrator from the approval', 400);
    if (params.plan_id !== undefined && params.plan_id !== governance.plan_id) {
      throw new EngineError('plan_id_mismatch', `params.plan_id (${JSON.stringify(params.plan_id)}) is not governance.plan_id (${governance.plan_id})`, 400);
    }
    const seller = await this.store.agents.getForTenant(tenantId, sellerAgentId);
    if (!seller) throw new EngineError('agent_not_found', `agent ${sellerAgentId} not found`, 404);
    if (seller.role !== 'seller') throw new EngineError('not_a_seller_agent', `agent ${seller.id} (${seller.name}) is a ${seller.role} agent: governed spend goes to a seller`, 422);
    const agent = await this.checkGovernance(tenantId, governance);
    const sync = sellerSyncNeed(seller, agent, params);
    if (sync.kind === 'refuse') {
      throw new EngineError('governance_agent_not_registrable', `${sync.reason}; nothing was sent. Register the governance agent at its https URL, or remove its seller_credentials to spend without registering it`, 422, {
        agent_id: agent.id,
        seller_agent_id: seller.id,
      });
    }
    const first = initialState(
      { agent_id: governance.agent_id, plan_id: governance.plan_id, target_agent: seller.url, caller: this.caller(), tool: task, apply_conditions: governance.apply_conditions === true },
      this.clock.now(),
    );
    // The seller's registration of the agent comes first (seller-sync.ts); a skipped one is said on the operation.
    const state: GovernedState =
      sync.kind === 'sync' ? { ...first, step: 'syncing', seller_sync: { status: 'pending' } } : sync.kind === 'skip' ? { ...first, seller_sync: { status: 'skipped', reason: sync.reason } } : first;
    // 3.0 create_media_buy carries plan_id when the account is governed; update_media_buy has no such field.
    return { params: task === 'create_media_buy' ? { ...params, plan_id: governance.plan_id } : params, governance: state, seller };
  }

  /** The governance agent and its plan, as a governed request (or a campaign) needs them. */
  async checkGovernance(tenantId: string, governance: GovernanceRequest): Promise<AgentRow> {
    const agent = await this.store.agents.getForTenant(tenantId, governance.agent_id);
    if (!agent) throw new EngineError('agent_not_found', `governance agent ${governance.agent_id} not found`, 404);
    if (agent.role !== 'governance') {
      throw new EngineError('not_a_governance_agent', `agent ${agent.id} (${agent.name}) is a ${agent.role} agent, not a governance agent`, 422, { agent_id: agent.id, role: agent.role });
    }
    const plan = await this.plans.readiness(tenantId, agent.id, governance.plan_id);
    switch (plan.kind) {
      case 'unknown':
        throw new EngineError('plan_not_found', `plan ${governance.plan_id} was never synced to ${agent.name}: sync it first (POST /v1/plans)`, 422, { plan_id: governance.plan_id });
      case 'syncing':
        throw new EngineError('plan_not_ready', `plan ${governance.plan_id} is still being synced (operation ${plan.view.syncing_operation}); try again when it has completed`, 409, {
          operation_id: plan.view.syncing_operation,
        });
      case 'rejected':
        throw new EngineError('plan_rejected', `${agent.name} did not accept plan ${governance.plan_id} (status ${plan.view.status}): fix it and sync it again`, 422, {
          plan_id: governance.plan_id,
          last_sync: plan.view.last_sync,
        });
      case 'accepted':
        return agent;
    }
  }
}
