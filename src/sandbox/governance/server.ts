/**
 * The governance agent's AdCP tool surface, built with the SDK's server
 * builder. The four governance tasks are the builder's `governance` domain
 * handlers (so capabilities list them and the SDK envelope applies: context
 * echo, adcp_version); the review polls and sandbox_review are custom tools.
 * Validation is the handlers' own (schema-check.ts explains why).
 */
import { z } from 'zod';
import { createAdcpServer } from '@adcp/sdk/server/legacy/v5';
import type { AdcpServer, InMemoryStateStore } from '@adcp/sdk/server';
import type { GovernanceCore } from './core.js';
import { REPLAY_TTL_SECONDS } from '../idempotency.js';
import { withoutSlashNameWarnings } from '../adcp-server.js';

type Args = Record<string, unknown>;

/** An open input schema, as for the seller's custom tools: the handlers validate. */
const openInput = z.looseObject({});

export const GOVERNANCE_SKILLS: Array<[string, string]> = [
  ['get_adcp_capabilities', 'AdCP capabilities of this governance agent.'],
  ['sync_plans', 'Push campaign plans; each re-sync bumps the plan version.'],
  ['check_governance', 'Intent check of a spend: {plan_id, caller, tool, payload, target_agent?, governance_context?}.'],
  ['report_plan_outcome', "Report the seller's terminal result; commits confirmed spend once per idempotency_key."],
  ['get_plan_audit_logs', 'Budget state, governed actions and the audit trail of plans.'],
  ['tasks/get', 'Poll a human-review task by task_id.'],
  ['tasks_get', 'Alias of tasks/get.'],
  ['get_task_status', 'Alias of tasks/get (3.1 name).'],
  ['tasks/list', 'List human-review tasks.'],
  ['list_tasks', 'Alias of tasks/list.'],
  ['sandbox_review', 'Sandbox-only: end a human review now: {task_id, decision: approved|denied, reason?}.'],
];

export function buildGovernanceServer(core: GovernanceCore, stateStore: InMemoryStateStore): AdcpServer {
  const poll = {
    description: 'Poll a human-review task: {task_id, include_result? (default true)} → {task_id, status, result?: the check_governance decision}.',
    inputSchema: openInput,
    handler: async (args: Args) => core.getTask(args),
  };
  const list = {
    description: 'List human-review tasks: {filters?: {statuses, ...}, pagination?: {max_results, cursor}}.',
    inputSchema: openInput,
    handler: async (args: Args) => core.listTasks(args),
  };
  return withoutSlashNameWarnings(() =>
    createAdcpServer({
      name: 'AdCP sandbox governance agent',
      version: '1.0.0',
      stateStore,
      instructions:
        'Sandbox campaign-governance agent: sync_plans, then check_governance (intent: tool + payload, the exact seller ' +
        'arguments; target_agent = the seller URL) before each spend, then report_plan_outcome. Approvals carry a signed ' +
        'governance_context (JWKS at /.well-known/jwks.json). Plans with human_review_required go async: poll tasks/get, ' +
        'or end the review with sandbox_review.',
      validation: { requests: 'off', responses: 'off' },
      // report_plan_outcome and sync_plans are idempotent in core.ts.
      capabilities: { idempotency: { replay_ttl_seconds: REPLAY_TTL_SECONDS } },
      governance: {
        syncPlans: async (params) => core.syncPlans(params as Args) as never,
        checkGovernance: async (params) => core.checkGovernance(params as Args) as never,
        reportPlanOutcome: async (params) => core.reportPlanOutcome(params as Args) as never,
        getPlanAuditLogs: async (params) => core.getPlanAuditLogs(params as Args) as never,
      },
      customTools: {
        'tasks/get': poll,
        tasks_get: poll,
        get_task_status: poll,
        'tasks/list': list,
        list_tasks: list,
        sandbox_review: {
          description: GOVERNANCE_SKILLS.find(([id]) => id === 'sandbox_review')![1],
          inputSchema: openInput,
          handler: async (args: Args) => core.review(args),
        },
      },
    }),
  );
}
