/**
 * The sync step is durable like the governed flow's others (README, Governance): a
 * seller that does not answer sync_governance is retried with backoff, the operation
 * stalled (and said so) after the retry budget, nothing checked or bought meanwhile,
 * and it carries on once the seller answers. A held buy a person approves is
 * registered before its check too.
 *
 * The seller sits behind a fault proxy, so its registered URL is the proxy's: its
 * buys use an account outside the sandbox's `gov_` ones, whose tokens it would check
 * against its own URL (the sync and the flow are the same for any account).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxGovernance, type SandboxGovernance } from '../../src/sandbox/governance/agent.js';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { plan } from '../helpers/governance.js';
import { eventually, startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { startTlsFront, trustLoopbackCertificate, type TlsFront } from '../helpers/tls-front.js';
import { startToolFaultProxy, type ToolFaultProxy } from '../helpers/tool-fault-proxy.js';

const CREDENTIALS = 'gov-seller-credentials-faults-0123456789abcdef';

let governance: SandboxGovernance;
let seller: SandboxSeller;
let proxy: ToolFaultProxy;
let front: TlsFront;
let orch: TestOrchestrator;
let untrust: () => void;
let sellerId: string;
let governanceId: string;

beforeAll(async () => {
  untrust = trustLoopbackCertificate();
  governance = await startSandboxGovernance({ reviewDelayMs: null });
  seller = await startSandboxSeller({ submittedDelayMs: 300, governanceAware: true });
  proxy = await startToolFaultProxy(seller.origin);
  front = await startTlsFront(governance.origin);
  orch = await startOrchestrator({ env: { ADCP_ORCH_RETRY_ATTEMPTS: '2' } });
  sellerId = await orch.registerAgent({ name: 'seller', url: `${proxy.origin}/mcp`, webhook_signing: { jwks_uri: seller.jwksUrl } });
  const created = await orch.api('POST', '/v1/agents', { name: 'governance', role: 'governance', protocol: 'mcp', url: `${front.origin}/mcp`, seller_credentials: CREDENTIALS });
  expect(created.status).toBe(201);
  governanceId = created.body.id;
  const res = await orch.api('POST', '/v1/plans', { agent_id: governanceId, plans: [plan('plan_faults', { approved_sellers: [`${proxy.origin}/mcp`] })] });
  expect((await waitForStatus(orch, res.body.id, ['completed', 'failed'])).status).toBe('completed');
});

afterAll(async () => {
  await orch?.close();
  await proxy?.close();
  await front?.close();
  await seller?.close();
  await governance?.close();
  untrust?.();
});

const request = (accountId: string) => ({
  account: { account_id: accountId },
  brand: { domain: 'example-brand.com' },
  start_time: 'asap',
  end_time: '2031-06-30T00:00:00Z',
  packages: [{ product_id: 'sandbox_instant', pricing_option_id: 'cpm_usd_fixed', budget: 1_000 }],
});
const show = async (id: string) => (await orch.api('GET', `/v1/operations/${id}`)).body;
const checksOf = (key: string) => governance.stats().checks.filter((c) => c.payload.idempotency_key === key);

describe('the sync step, durable', () => {
  it('retries a seller that does not answer, stalls after the budget with nothing checked or bought, then carries on', async () => {
    proxy.set('sync_governance', 'fail');
    const res = await orch.api('POST', '/v1/media-buys', { agent_id: sellerId, request: request('acme_outage'), governance: { agent_id: governanceId, plan_id: 'plan_faults' } });
    expect(res.status).toBe(202);
    const id = res.body.id as string;
    const stalled = await eventually(async () => {
      const op = await show(id);
      return op.stalled ? op : undefined;
    });
    expect(stalled.status).toBe('requested');
    expect(stalled.stalled_reason).toMatch(/no answer to sync_governance/);
    expect(stalled.governance).toMatchObject({ step: 'syncing', checks: 0, seller_sync: { status: 'pending', last_error: { code: expect.stringMatching(/^HTTP_503|SERVICE_UNAVAILABLE/) } } });
    const failures = stalled.events.filter((e: any) => e.kind === 'governance_sync_failed');
    expect(failures.length).toBeGreaterThanOrEqual(2);
    expect(failures[0].detail.retry_in_ms).toBeGreaterThan(0);
    expect(checksOf(stalled.idempotency_key)).toEqual([]);
    expect(seller.stats().calls.filter((c) => c.tool === 'create_media_buy')).toEqual([]);
    expect(seller.governanceSyncs!.syncs()).toEqual([]);

    proxy.set('sync_governance', 'pass');
    const done = await waitForStatus(orch, id, ['completed', 'failed', 'rejected'], 30_000);
    expect(done.status).toBe('completed');
    expect(done.stalled).toBe(false);
    expect(done.governance.seller_sync).toMatchObject({ status: 'synced' });
    expect(seller.governanceSyncs!.syncs()).toMatchObject([{ account: { account_id: 'acme_outage' }, url: `${front.origin}/mcp`, credentials: CREDENTIALS }]);
    expect(proxy.seen.filter((s) => s.tool === 'sync_governance').length).toBeGreaterThanOrEqual(3);
    expect(checksOf(done.idempotency_key)).toHaveLength(1);
  });

  it('a held buy a person approves is registered with the seller before its check', async () => {
    const res = await orch.api('POST', '/v1/media-buys', {
      agent_id: sellerId,
      request: request('acme_held'),
      approval: 'required',
      governance: { agent_id: governanceId, plan_id: 'plan_faults' },
    });
    expect(res.status).toBe(202);
    const id = res.body.id as string;
    expect((await show(id)).needs_input).toBe(true);
    expect(seller.governanceSyncs!.syncs().filter((s) => s.account.account_id === 'acme_held')).toEqual([]);
    expect((await orch.api('POST', `/v1/operations/${id}/input`, { decision: 'approve' })).status).toBe(202);
    const done = await waitForStatus(orch, id, ['completed', 'failed', 'rejected'], 30_000);
    expect(done.status).toBe('completed');
    const kinds = done.events.map((e: any) => e.kind);
    expect(kinds.indexOf('governance_synced')).toBeGreaterThan(kinds.indexOf('answered'));
    expect(kinds.indexOf('governance_synced')).toBeLessThan(kinds.indexOf('governance_decision'));
    expect(seller.governanceSyncs!.syncs().filter((s) => s.account.account_id === 'acme_held')).toHaveLength(1);
  });
});
