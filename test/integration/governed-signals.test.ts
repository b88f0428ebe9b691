/**
 * activate_signal governed like create_media_buy (README, Governance): the intent
 * check names the tool and `purchase_type: signal_activation`, its payload is the
 * exact activation; the signals agent (built on the SDK, strict validation) gets the
 * approval's governance_context; the outcome is reported to the plan. A denial
 * activates nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxGovernance, type SandboxGovernance } from '../../src/sandbox/governance/agent.js';
import { plan } from '../helpers/governance.js';
import { eventually, startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { startSdkSignalsAgent, type SdkSignalsAgent } from '../helpers/sdk-signals-agent.js';

let governance: SandboxGovernance;
let signals: SdkSignalsAgent;
let orch: TestOrchestrator;
let signalsId: string;
let governanceId: string;

beforeAll(async () => {
  governance = await startSandboxGovernance({ reviewDelayMs: null });
  signals = await startSdkSignalsAgent();
  orch = await startOrchestrator({ env: { ADCP_ORCH_RETRY_ATTEMPTS: '3' } });
  signalsId = await orch.registerAgent({ name: 'signals', url: signals.url });
  governanceId = await orch.registerAgent({ name: 'governance', role: 'governance', url: governance.url });
  for (const [planId, sellers] of [['plan_signals', [signals.url]], ['plan_other_sellers', ['https://elsewhere.example/mcp']]] as const) {
    const res = await orch.api('POST', '/v1/plans', { agent_id: governanceId, plans: [plan(planId, { approved_sellers: sellers })] });
    expect((await waitForStatus(orch, res.body.id, ['completed', 'failed'])).status).toBe('completed');
  }
});

afterAll(async () => {
  await orch?.close();
  await signals?.close();
  await governance?.close();
});

const activation = (segment: string) => ({
  signal_agent_segment_id: segment,
  destinations: [{ type: 'platform', platform: 'the-trade-desk', account: 'ttd-123' }],
  account: { account_id: 'gov_acme' },
});

async function activate(segment: string, planId: string) {
  const res = await orch.api('POST', '/v1/operations', { agent_id: signalsId, task: 'activate_signal', params: activation(segment), governance: { agent_id: governanceId, plan_id: planId } });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.id as string;
}

describe('governed activate_signal', () => {
  it('is checked with its tool, sent with the approval token, and its outcome reported', async () => {
    const id = await activate('seg_auto_intenders', 'plan_signals');
    const op = await eventually(async () => {
      const body = (await orch.api('GET', `/v1/operations/${id}`)).body;
      return body.governance?.step === 'reported' ? body : undefined;
    }, 30_000);
    expect(op.status).toBe('completed');
    expect(op.governance).toMatchObject({ step: 'reported', check: { decision: 'approved' }, outcome: { outcome: 'completed', status: 'accepted' } });
    // No plan_id is added to an activation: only a media buy carries one.
    expect(op.request.plan_id).toBeUndefined();

    const checks = governance.stats().checks.filter((c) => c.plan_id === 'plan_signals');
    expect(checks).toHaveLength(1);
    expect(checks[0]).toMatchObject({ tool: 'activate_signal', audience: signals.url, payload: { signal_agent_segment_id: 'seg_auto_intenders', idempotency_key: op.idempotency_key } });

    // The agent got the activation once, with the approval's token, and found it valid.
    expect(signals.activations).toHaveLength(1);
    const sent = signals.activations[0]!;
    expect(sent.idempotency_key).toBe(op.idempotency_key);
    expect(sent.governance_context).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(signals.log.invalid()).toEqual([]);

    expect(governance.stats().outcomes.filter((o) => o.plan_id === 'plan_signals')).toMatchObject([{ outcome: 'completed' }]);
    // What was reported: a signal activation, referenced by its segment (the deployments carry no id).
    const row = await orch.app.store.operations.get(id);
    expect(JSON.parse(row!.governance!).outcome.request).toMatchObject({
      purchase_type: 'signal_activation',
      outcome: 'completed',
      seller_response: { seller_reference: 'seg_auto_intenders' },
    });
  });

  it('is not activated when the governance agent denies it', async () => {
    const before = signals.activations.length;
    const id = await activate('seg_denied', 'plan_other_sellers');
    const op = await waitForStatus(orch, id, ['rejected', 'completed', 'failed'], 30_000);
    expect(op.status).toBe('rejected');
    expect(op.error).toMatchObject({ code: 'GOVERNANCE_DENIED' });
    expect(governance.stats().checks.filter((c) => c.plan_id === 'plan_other_sellers')).toMatchObject([{ tool: 'activate_signal' }]);
    expect(signals.activations).toHaveLength(before);
    expect(signals.log.of('activate_signal').filter((c) => c.args.signal_agent_segment_id === 'seg_denied')).toEqual([]);
  });
});
