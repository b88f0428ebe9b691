/**
 * Shared pieces of the sandbox governance tests: plans, governed buys, and a
 * caller through the project's own AdCP client (src/adcp) over real HTTP.
 */
import { randomUUID } from 'node:crypto';
import { createAdcpClient } from '../../src/adcp/client.js';
import type { AdcpClient, AgentEndpoint, TaskReply } from '../../src/adcp/types.js';

export const CALLER = 'http://127.0.0.1:8080';

/** A fresh idempotency key (a UUID matches the spec pattern). */
export const newKey = (): string => randomUUID();

/** A plan with a flight around now, in USD (the sandbox seller's currency). */
export function plan(planId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    plan_id: planId,
    brand: { domain: 'example-brand.com' },
    objectives: 'Sandbox governance test plan',
    budget: { total: 10_000, currency: 'USD', reallocation_threshold: 1_000 },
    flight: { start: '2026-01-01T00:00:00Z', end: '2031-12-31T23:59:59Z' },
    countries: ['US'],
    ...extra,
  };
}

/** create_media_buy arguments for a governed account (gov_…) under a plan. */
export function governedBuy(planId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    idempotency_key: newKey(),
    plan_id: planId,
    account: { account_id: 'gov_acme' },
    brand: { domain: 'example-brand.com' },
    start_time: 'asap',
    end_time: '2031-06-30T00:00:00Z',
    packages: [{ product_id: 'sandbox_instant', pricing_option_id: 'cpm_usd_fixed', budget: 4_000 }],
    ...extra,
  };
}

export interface Caller {
  client: AdcpClient;
  call(task: string, params: Record<string, unknown>): Promise<TaskReply>;
  poll(taskId: string): Promise<TaskReply>;
}

/**
 * A raw client for a sandbox agent: it sends what it is given, valid or not (the orchestrator's
 * own check is bypassed: these tests are about what the agent does with any request).
 */
export function caller(agent: AgentEndpoint): Caller {
  const client = createAdcpClient({ callTimeoutMs: 20_000, pollTimeoutMs: 20_000 });
  return {
    client,
    call: (task, params) => client.callTask(agent, task, params, { requestChecked: true }),
    poll: (taskId) => client.getTask(agent, taskId),
  };
}

/** An intent check of `payload` for the seller at `target` (named in `ext`, as a 3.0 request can). */
export function intent(planId: string, payload: Record<string, unknown>, target: string, extra: Record<string, unknown> = {}) {
  return { plan_id: planId, caller: CALLER, tool: 'create_media_buy', payload, ext: { adcp_orchestrator: { target_agent: target } }, ...extra };
}
