/**
 * Syncing plans to a governance agent (AdCP spec, governance: `sync_plans`) as a
 * durable operation, whichever door it came through (POST /v1/plans, the MCP tool
 * sync_plan): the target must be a governance agent; the plans go as given (their
 * schema is the agent's to enforce), and what the agent accepts is read back by
 * PlanBook from these operations.
 */
import type { OperationRow, Store } from '../../store/index.js';
import type { KeyReservation } from '../../store/idempotency-repo.js';
import { EngineError } from '../errors.js';
import type { OperationService } from '../operation-service.js';

export interface PlanSyncRequest {
  tenantId: string;
  agentId: string;
  plans: Array<{ plan_id: string } & Record<string, unknown>>;
  actor: string;
  clientKey?: string;
  reservation?: KeyReservation;
}

export async function syncPlans(deps: { store: Store; operations: OperationService }, req: PlanSyncRequest, waitMs?: number): Promise<OperationRow> {
  const agent = await deps.store.agents.getForTenant(req.tenantId, req.agentId);
  if (!agent) throw new EngineError('agent_not_found', `agent ${req.agentId} not found`, 404);
  if (agent.role !== 'governance') {
    throw new EngineError('not_a_governance_agent', `agent ${agent.id} (${agent.name}) is a ${agent.role} agent: plans are synced to a governance agent`, 422);
  }
  return deps.operations.createAndStart(
    {
      tenantId: req.tenantId,
      agentId: agent.id,
      task: 'sync_plans',
      params: { plans: req.plans },
      webhook: 'none',
      actor: req.actor,
      ...(req.clientKey !== undefined ? { clientKey: req.clientKey } : {}),
      ...(req.reservation ? { reservation: req.reservation } : {}),
    },
    waitMs,
  );
}
