/**
 * An agent that answers with an error code we do not know and no `recovery`: AdCP's
 * forward-compatible decoding (error-handling.mdx) defaults it to transient, bounded by the
 * retry budget. The request is tried ADCP_ORCH_RETRY_ATTEMPTS times with the same key and
 * bytes, then the operation is stalled for a person, saying why, and not tried again, not
 * even slowly. A code we know keeps the recovery the spec gives it: INVALID_REQUEST without
 * `recovery` is correctable and fails at once. The agent's answers are chosen by a proxy in
 * front of the sandbox agents (tool-fault-proxy.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { governedBuy, governedRequest, startGoverned, syncPlan, type GovernedSetup } from '../helpers/governed.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { eventually, startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { startToolFaultProxy, type ToolFaultProxy } from '../helpers/tool-fault-proxy.js';

const TRIES = 3;
const UNKNOWN = { code: 'X_VENDOR_INVENTORY_REBALANCING', message: 'inventory is being rebalanced' };

let seller: SandboxSeller | undefined;
let proxy: ToolFaultProxy | undefined;
let orch: TestOrchestrator | undefined;
let g: GovernedSetup | undefined;
afterEach(async () => {
  await orch?.close();
  await g?.close();
  await proxy?.close();
  await seller?.close();
  orch = g = proxy = seller = undefined;
});

const stalledOp = (o: TestOrchestrator, id: string) =>
  eventually(async () => {
    const op = (await o.api('GET', `/v1/operations/${id}`)).body;
    return op.stalled ? op : undefined;
  }, 30_000);

/** Long enough for another retry at the backoff the last one had, had one been scheduled. */
const pastAnotherRetry = () => new Promise((r) => setTimeout(r, 5_000));

describe('a seller answering an error code we do not know, without recovery', () => {
  const setUp = async () => {
    seller = await startSandboxSeller();
    proxy = await startToolFaultProxy(seller.origin);
    orch = await startOrchestrator({ env: { ADCP_ORCH_RETRY_ATTEMPTS: String(TRIES) } });
    const agentId = await orch.registerAgent({ url: `${proxy.origin}/mcp` });
    return { orch, proxy, agentId };
  };
  const buy = (o: TestOrchestrator, agentId: string) =>
    o.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_instant'), webhook: 'none' }).then((r) => r.body);

  it('is tried ADCP_ORCH_RETRY_ATTEMPTS times, then stalled for a person, and never again', async () => {
    const { orch, proxy, agentId } = await setUp();
    proxy.set('create_media_buy', { adcpError: UNKNOWN });
    const op = await buy(orch, agentId);
    const stalled = await stalledOp(orch, op.id);
    expect(stalled.status).toBe('unknown');
    expect(stalled.stalled_reason).toContain(UNKNOWN.code);
    expect(stalled.stalled_reason).toMatch(new RegExp(`on each of ${TRIES} tries .*not tried again`));
    expect(stalled.error).toEqual({ ...UNKNOWN, recovery: 'transient' });
    expect(stalled.next_check_at).toBeNull();
    const failures = stalled.events.filter((e: any) => e.kind === 'send_failed');
    expect(failures).toHaveLength(TRIES);
    expect(failures.map((f: any) => f.detail.error.code)).toEqual(Array(TRIES).fill(UNKNOWN.code));
    expect(failures.at(-1).detail.retry_budget_spent).toBe(true);
    expect(stalled.events.filter((e: any) => e.kind === 'resend')).toHaveLength(TRIES - 1);
    expect(stalled.events.at(-1)).toMatchObject({ kind: 'stalled', to: 'unknown' });
    const notes = await orch.app.store.notifications.after(orch.tenantId, 0, 1000);
    expect(notes.some((n) => n.type === 'operation.stalled' && n.operation_id === op.id)).toBe(true);
    expect(notes.some((n) => n.type === 'operation.failed' && n.operation_id === op.id)).toBe(false);

    await pastAnotherRetry();
    expect(proxy.seen.filter((s) => s.tool === 'create_media_buy')).toHaveLength(TRIES);
    const after = (await orch.api('GET', `/v1/operations/${op.id}`)).body;
    expect(after).toMatchObject({ status: 'unknown', stalled: true, next_check_at: null });
  }, 60_000);

  it('a code we know keeps its recovery: INVALID_REQUEST without one is correctable and fails at once', async () => {
    const { orch, proxy, agentId } = await setUp();
    proxy.set('create_media_buy', { adcpError: { code: 'INVALID_REQUEST', message: 'packages[0].budget is below the minimum' } });
    const op = await buy(orch, agentId);
    const done = await waitForStatus(orch, op.id, ['failed', 'unknown', 'completed']);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'INVALID_REQUEST', recovery: 'correctable' });
    expect(done.stalled).toBe(false);
    expect(done.events.some((e: any) => e.kind === 'send_failed' || e.kind === 'resend')).toBe(false);
    expect(proxy.seen.filter((s) => s.tool === 'create_media_buy')).toHaveLength(1);
  });
});

describe('a governance agent answering an error code we do not know, without recovery', () => {
  it('the check is tried ADCP_ORCH_RETRY_ATTEMPTS times, then stalled for a person with nothing sent, and never tried again', async () => {
    g = await startGoverned({
      env: { ADCP_ORCH_RETRY_ATTEMPTS: String(TRIES) },
      governanceUrl: async (governance) => {
        proxy = await startToolFaultProxy(governance.origin);
        return `${proxy.origin}/mcp`;
      },
    });
    await syncPlan(g, 'plan_unknown_code');
    proxy!.set('check_governance', { adcpError: UNKNOWN });
    const created = await governedBuy(g, 'plan_unknown_code', governedRequest());
    expect(created.status).toBe(202);
    const stalled = await stalledOp(g.orch, created.body.id);
    expect(stalled.status).toBe('requested');
    expect(stalled.stalled_reason).toContain(UNKNOWN.code);
    expect(stalled.stalled_reason).toMatch(new RegExp(`on each of ${TRIES} tries .*not tried again`));
    expect(stalled.next_check_at).toBeNull();
    expect(stalled.events.filter((e: any) => e.kind === 'governance_unavailable')).toHaveLength(TRIES);

    await pastAnotherRetry();
    expect(proxy!.seen.filter((s) => s.tool === 'check_governance')).toHaveLength(TRIES);
    expect(g.sellers[0]!.stats().calls).toEqual([]);
  }, 60_000);

  it('an outcome report it answers so is tried ADCP_ORCH_RETRY_ATTEMPTS times, then kept refused for a person', async () => {
    g = await startGoverned({
      env: { ADCP_ORCH_RETRY_ATTEMPTS: String(TRIES) },
      governanceUrl: async (governance) => {
        proxy = await startToolFaultProxy(governance.origin);
        return `${proxy.origin}/mcp`;
      },
    });
    await syncPlan(g, 'plan_unknown_report');
    proxy!.set('report_plan_outcome', { adcpError: UNKNOWN });
    const created = await governedBuy(g, 'plan_unknown_report', governedRequest());
    const stalled = await stalledOp(g.orch, created.body.id);
    expect(stalled.status).toBe('completed');
    expect(stalled.governance).toMatchObject({ step: 'reported', outcome: { status: 'refused', error: { code: UNKNOWN.code } } });
    expect(stalled.stalled_reason).toContain(UNKNOWN.code);
    expect(stalled.next_check_at).toBeNull();

    await pastAnotherRetry();
    expect(proxy!.seen.filter((s) => s.tool === 'report_plan_outcome')).toHaveLength(TRIES);
  }, 60_000);
});
