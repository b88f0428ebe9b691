/**
 * Plans as the governance agent last accepted them, read from the tenant's
 * `sync_plans` operations (the durable record of every sync and its reply):
 * nothing is kept twice, and what GET /v1/plans/:plan_id shows is exactly what
 * the agent answered. A sync's reply lists each plan with `status: active |
 * error` and its `version`; a plan in error keeps its previous revision at the
 * agent, so "accepted" is the newest sync that answered it `active`.
 */
import { isTerminal, type OperationStatus } from '../../domain/status.js';
import type { OperationRow, Store } from '../../store/index.js';
import { EngineError } from '../errors.js';

/** How many of an agent's newest syncs are read to find a plan (plans are synced by people, not in bulk). */
const SYNCS_READ = 500;

export interface PlanView {
  plan_id: string;
  agent_id: string;
  /** Of the newest sync that answered for this plan: active | error; `syncing` while the only sync is in flight. */
  status: 'active' | 'error' | 'syncing';
  /** The version the agent holds (of the last accepted revision); null when none was accepted. */
  version: number | null;
  /** The plan as last accepted. */
  plan: Record<string, unknown> | null;
  accepted_at: string | null;
  accepted_by_operation: string | null;
  last_sync: { status: string; version: number | null; errors: unknown[]; operation_id: string; at: string | null } | null;
  /** A sync of this plan still in flight. */
  syncing_operation: string | null;
}

export type PlanReadiness = { kind: 'accepted'; view: PlanView } | { kind: 'rejected'; view: PlanView } | { kind: 'syncing'; view: PlanView } | { kind: 'unknown' };

interface Answered {
  row: OperationRow;
  status: string;
  version: number | null;
  errors: unknown[];
  plan: Record<string, unknown> | null;
}

export class PlanBook {
  constructor(private readonly store: Store) {}

  /** As view, or `plan_not_found` (404) for a plan never synced (to that agent). */
  async show(tenantId: string, planId: string, agentId?: string): Promise<PlanView> {
    const view = await this.view(tenantId, planId, agentId);
    if (!view) throw new EngineError('plan_not_found', `plan ${planId} was never synced${agentId ? ` to agent ${agentId}` : ''}`, 404);
    return view;
  }

  /** The plan at `agentId` (or, without it, at whichever governance agent synced it last). */
  async view(tenantId: string, planId: string, agentId?: string): Promise<PlanView | undefined> {
    let q = this.store.db.kysely
      .selectFrom('operations')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('type', '=', 'sync_plans')
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(SYNCS_READ);
    if (agentId) q = q.where('agent_id', '=', agentId);
    const rows = await q.execute();
    let agent = agentId;
    let latest: Answered | undefined;
    let accepted: Answered | undefined;
    let syncing: OperationRow | undefined;
    for (const row of rows) {
      if (agent && row.agent_id !== agent) continue;
      const sent = planIn(row.request_body, planId);
      if (!sent) continue;
      agent ??= row.agent_id;
      if (!isTerminal(row.status as OperationStatus)) {
        syncing ??= row;
        continue;
      }
      const answered = answerFor(row, planId, sent);
      if (!answered) continue;
      latest ??= answered;
      if (answered.status === 'active') {
        accepted = answered;
        break;
      }
    }
    if (!agent || (!latest && !syncing)) return undefined;
    return {
      plan_id: planId,
      agent_id: agent,
      status: latest ? (latest.status === 'active' ? 'active' : 'error') : 'syncing',
      version: accepted?.version ?? null,
      plan: accepted?.plan ?? null,
      accepted_at: iso(accepted?.row.completed_at ?? null),
      accepted_by_operation: accepted?.row.id ?? null,
      last_sync: latest ? { status: latest.status, version: latest.version, errors: latest.errors, operation_id: latest.row.id, at: iso(latest.row.completed_at) } : null,
      syncing_operation: syncing?.id ?? null,
    };
  }

  /** Whether governed spend may be checked against this plan at this agent. */
  async readiness(tenantId: string, agentId: string, planId: string): Promise<PlanReadiness> {
    const view = await this.view(tenantId, planId, agentId);
    if (!view) return { kind: 'unknown' };
    if (view.version !== null) return { kind: 'accepted', view };
    return view.status === 'syncing' ? { kind: 'syncing', view } : { kind: 'rejected', view };
  }
}

function planIn(requestBody: string, planId: string): Record<string, unknown> | undefined {
  const plans = (JSON.parse(requestBody) as { plans?: unknown }).plans;
  if (!Array.isArray(plans)) return undefined;
  return plans.find((p): p is Record<string, unknown> => !!p && typeof p === 'object' && (p as { plan_id?: unknown }).plan_id === planId);
}

/** The agent's answer for one plan in a finished sync; a sync that failed as a whole answered for none. */
function answerFor(row: OperationRow, planId: string, sent: Record<string, unknown>): Answered | undefined {
  if (!row.result) return undefined;
  const result = JSON.parse(row.result) as { plans?: unknown; errors?: unknown };
  if (!Array.isArray(result.plans)) return undefined;
  const entry = result.plans.find((p) => !!p && typeof p === 'object' && (p as { plan_id?: unknown }).plan_id === planId) as Record<string, unknown> | undefined;
  if (!entry) return undefined;
  const errors = Array.isArray(result.errors)
    ? result.errors.filter((e) => {
        const details = e && typeof e === 'object' ? (e as { details?: { plan_id?: unknown } }).details : undefined;
        return details?.plan_id === planId || details?.plan_id === undefined;
      })
    : [];
  return {
    row,
    status: typeof entry.status === 'string' ? entry.status : 'unknown',
    version: typeof entry.version === 'number' ? entry.version : null,
    errors: entry.status === 'active' ? [] : errors,
    plan: sent,
  };
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
