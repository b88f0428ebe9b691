/**
 * Governance that cannot answer, and an approval that runs out before the
 * seller can be called: never a spend without a usable approval, and the
 * operation carries on by itself once things recover.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSandboxSeller } from '../../src/sandbox/seller.js';
import { checkedPayloads, governedBuy, governedRequest, outcomesFor, sellerReceived, startGoverned, syncPlan, waitForStep, type GovernedSetup } from '../helpers/governed.js';
import { eventually } from '../helpers/orchestrator.js';
import { startToolFaultProxy, type ToolFaultProxy } from '../helpers/tool-fault-proxy.js';

let g: GovernedSetup | undefined;
let proxy: ToolFaultProxy | undefined;
afterEach(async () => {
  await g?.close();
  await proxy?.close();
  g = undefined;
  proxy = undefined;
});

const get = async (id: string) => (await g!.orch.api('GET', `/v1/operations/${id}`)).body;

describe('governance unreachable', () => {
  it('halts (retries with backoff, stalled and told after the retry budget, nothing sent), then carries on when it is back', async () => {
    g = await startGoverned({
      env: { ADCP_ORCH_RETRY_ATTEMPTS: '2' },
      governanceUrl: async (governance) => {
        proxy = await startToolFaultProxy(governance.origin);
        return `${proxy.origin}/mcp`;
      },
    });
    await syncPlan(g, 'plan_outage');
    proxy!.set('check_governance', 'fail');
    const created = await governedBuy(g, 'plan_outage', governedRequest());
    expect(created.status).toBe(202);
    expect(created.body.status).toBe('requested');

    const stalled = await eventually(async () => {
      const op = await get(created.body.id);
      return op.stalled ? op : undefined;
    });
    expect(stalled.status).toBe('requested');
    expect(stalled.governance).toMatchObject({ step: 'checking', check: null, last_error: { code: 'SERVICE_UNAVAILABLE' } });
    expect(stalled.stalled_reason).toMatch(/no governance decision/);
    const failures = stalled.events.filter((e: any) => e.kind === 'governance_unavailable');
    expect(failures.length).toBeGreaterThanOrEqual(2);
    expect(failures[0].detail.retry_in_ms).toBeGreaterThan(0);
    const notes = await g.orch.app.store.notifications.after(g.orch.tenantId, 0, 1000);
    expect(notes.some((n) => n.type === 'operation.stalled' && n.operation_id === created.body.id)).toBe(true);
    expect(g.sellers[0]!.stats().calls).toEqual([]);
    expect(g.governance.stats().checks.filter((c) => c.plan_id === 'plan_outage')).toEqual([]);

    proxy!.set('check_governance', 'pass');
    const op = await waitForStep(g.orch, created.body.id, 'reported', 30_000);
    expect(op.status).toBe('completed');
    expect(op.stalled).toBe(false);
    expect(sellerReceived(g.sellers[0]!, op.idempotency_key)).toHaveLength(1);
    expect(outcomesFor(g.governance, 'plan_outage')).toMatchObject([{ outcome: 'completed', committed: 4_000 }]);
    const text = await (await fetch(`${g.orch.url}/metrics`)).text();
    expect(text).toMatch(/adcp_orch_governance_checks_total\{decision="unavailable"\} [1-9]/);
    expect(text).toMatch(/adcp_orch_governance_checks_total\{decision="approved"\} [1-9]/);
    expect(text).toMatch(/adcp_orch_governance_outcomes_reported_total\{outcome="completed",status="accepted"\} 1/);
    expect(text).toMatch(/adcp_orch_governance_outcomes_pending 0/);
    expect(text).toMatch(/adcp_orch_governance_wait_seconds_count [1-9]/);
  }, 60_000);

  it('keeps an outcome report owed while the agent refuses connections, and sends it (same key) once it is back', async () => {
    g = await startGoverned({
      governanceUrl: async (governance) => {
        proxy = await startToolFaultProxy(governance.origin);
        return `${proxy.origin}/mcp`;
      },
    });
    await syncPlan(g, 'plan_ledger');
    proxy!.set('report_plan_outcome', 'fail');
    const created = await governedBuy(g, 'plan_ledger', governedRequest());
    await proxy!.waitFor('report_plan_outcome', 'fail', 2);
    const owed = await get(created.body.id);
    expect(owed.status).toBe('completed');
    expect(owed.governance).toMatchObject({ step: 'reporting', outcome: { status: 'pending', outcome: 'completed' } });
    const text = await (await fetch(`${g.orch.url}/metrics`)).text();
    expect(text).toMatch(/adcp_orch_governance_outcomes_pending 1/);

    proxy!.set('report_plan_outcome', 'pass');
    const op = await waitForStep(g.orch, created.body.id, 'reported', 30_000);
    expect(op.governance.outcome).toMatchObject({ status: 'accepted', committed_budget: 4_000 });
    expect(g.governance.stats().outcomeCallsByKey[op.governance.outcome.idempotency_key]).toBe(1);
    expect(g.governance.stats().committedByPlan.plan_ledger).toBe(4_000);
  }, 60_000);
});

describe('approval expired before sending', () => {
  it('re-checks (a new token for the same bytes and key) and sends once, with the valid token', async () => {
    g = await startGoverned({ governance: { approvalTtlSeconds: 2 }, env: { ADCP_ORCH_RETRY_ATTEMPTS: '10' } });
    await syncPlan(g, 'plan_ttl');
    // The seller is down when the approval comes: the send cannot leave, and the approval runs out meanwhile.
    const sellerPort = Number(new URL(g.sellers[0]!.origin).port);
    await g.sellers[0]!.close();
    const created = await governedBuy(g, 'plan_ttl', governedRequest());
    const waiting = await eventually(async () => {
      const op = await get(created.body.id);
      return op.events.some((e: any) => e.kind === 'send_failed') ? op : undefined;
    });
    expect(waiting.governance.check.decision).toBe('approved');
    const expiresAt = Date.parse(waiting.governance.check.expires_at);
    await eventually(async () => (Date.now() > expiresAt + 200 ? true : undefined), 10_000);
    g.sellers[0] = await startSandboxSeller({ port: sellerPort, governance: { agentUrl: g.governance.url, jwksUrl: g.governance.jwksUrl } });

    const op = await waitForStep(g.orch, created.body.id, 'reported', 30_000);
    expect(op.status).toBe('completed');
    expect(op.events.some((e: any) => e.kind === 'approval_expired')).toBe(true);
    const checks = checkedPayloads(g.governance, op.idempotency_key);
    // At least one re-check after the first approval ran out. How many depends on how often the
    // retry timer fired while the seller was still down (each retry past expiry re-checks), so
    // the count is not fixed; every one is an approval for the same key.
    expect(checks.length).toBeGreaterThanOrEqual(2);
    expect(new Set(checks.map((c) => c.status))).toEqual(new Set(['approved']));
    // One buy, under the one key, with a token the seller accepted (the last check's).
    expect(sellerReceived(g.sellers[0]!, op.idempotency_key)).toHaveLength(1);
    expect(g.sellers[0]!.stats().governanceRefusals).toEqual([]);
    expect(g.sellers[0]!.stats().mediaBuysCreatedByKey[op.idempotency_key]).toBe(1);
    expect(outcomesFor(g.governance, 'plan_ttl')).toMatchObject([
      { outcome: 'completed', check_id: checks[checks.length - 1]!.check_id, committed: 4_000 },
    ]);
  }, 60_000);
});
