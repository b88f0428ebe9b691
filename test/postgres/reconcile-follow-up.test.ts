/**
 * Deferred orphans across instances on one PostgreSQL: instance A reconciles and
 * defers an orphan (one of our sends to the agent is unresolved); the send is then
 * resolved by instance B, which learnt of the deferral from the database alone. B
 * follows up at once, under the agent's run lease, and A never runs at the same time.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { newOperationRow } from '../../src/store/operation-row.js';
import { postgresAdminUrl, tempPostgres, type TestDatabase } from '../helpers/databases.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { eventually, startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';

const suite = postgresAdminUrl ? describe : describe.skip;

const listSpyOf = (o: TestOrchestrator) =>
  vi.spyOn((o.app.reconciler as unknown as { adcp: { listTasks: (...a: unknown[]) => unknown } }).adcp, 'listTasks');

suite('deferred orphans followed up by another instance on PostgreSQL', () => {
  let database: TestDatabase | undefined;
  let seller: SandboxSeller | undefined;
  let a: TestOrchestrator | undefined;
  let b: TestOrchestrator | undefined;
  let agentId = '';

  beforeAll(async () => {
    database = await tempPostgres();
    seller = await startSandboxSeller({ submittedDelayMs: 600_000, workingDelayMs: 600_000 });
    const setup = await startOrchestrator({ database, keepDatabase: true });
    agentId = await setup.registerAgent({ url: seller.url });
    await setup.close();
    // A's scheduler only looks for due work when woken, so the send below is resolved by B.
    a = await startOrchestrator({ env: { ADCP_ORCH_RECONCILE_INTERVAL_MS: '900000', ADCP_ORCH_SCHEDULER_TICK_MS: '600000' }, database, keepDatabase: true });
    // A's start-up run takes this period's slot: from here on only a follow-up reconciles the agent.
    await eventually(async () => ((await a!.app.store.reconcile.listForAgent(agentId)).some((r) => r.finished_at !== null) ? true : undefined), 15_000);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await database?.drop();
    await seller?.close();
  });

  it('B resolves the send A deferred on and adopts the orphan at once; runs never overlap', async () => {
    const agent = (await a!.app.store.agents.get(agentId))!;
    const key = randomUUID();
    const now = Date.now();
    const blocking = newOperationRow(
      {
        id: randomUUID(),
        tenant_id: agent.tenant_id,
        agent_id: agentId,
        type: 'create_media_buy',
        idempotency_key: key,
        request_body: JSON.stringify({ ...mediaBuyRequest('sandbox_submitted'), idempotency_key: key }),
        created_at: now - 1000,
      },
      // Sent, reply lost, awaiting its resend an hour from now.
      { status: 'calling_adcp', next_check_at: now + 3_600_000, check_kind: 'send', attempt: 1 },
    );
    await a!.app.store.operations.insert(blocking, { source: 'call', kind: 'transition', from: 'requested', to: 'calling_adcp' });
    const orphan = seller!.createTaskBehindBuyersBack();
    const first = (await a!.api('POST', '/v1/reconcile', { agent_id: agentId })).body.reports[0];
    expect(first.deferred_orphans).toEqual([orphan]);

    b = await startOrchestrator({ env: { ADCP_ORCH_RECONCILE_INTERVAL_MS: '900000' }, database, keepDatabase: true });
    const listsA = listSpyOf(a!);
    const listsB = listSpyOf(b);
    try {
      await b.app.store.db.kysely.updateTable('operations').set({ next_check_at: Date.now() }).where('id', '=', blocking.id).execute();
      b.app.scheduler.wake();
      await waitForStatus(b, blocking.id, ['submitted']);
      const resolvedAt = Date.now();
      // Well before A's own next look at its deferral (a minute after it recorded it).
      const adopted = await eventually(async () => (await b!.app.store.operations.findByTask(agentId, orphan)) ?? undefined, 20_000);
      expect(Date.now() - resolvedAt).toBeLessThan(20_000);
      expect(adopted.status).toBe('submitted');
      expect(listsB).toHaveBeenCalledTimes(1);
      expect(listsA).not.toHaveBeenCalled();
    } finally {
      listsA.mockRestore();
      listsB.mockRestore();
    }
    // The orphan is adopted during the run; the deferral is cleared when that run ends.
    await eventually(async () => ((await a!.app.store.reconcile.deferral(agentId)) === undefined ? true : undefined), 20_000);
    const running = await a!.app.store.jobLeases.get(`reconcile:${agentId}`);
    expect(running?.owner).toBe(b.app.instanceId);

    // The run clears the deferral a moment before it records its end (two statements): wait for that end.
    const runs = await eventually(async () => {
      const all = (await a!.app.store.reconcile.listForAgent(agentId, 100)).reverse();
      return all.every((r) => r.finished_at !== null) ? all : undefined;
    }, 10_000);
    for (let i = 1; i < runs.length; i++) expect(runs[i]!.started_at).toBeGreaterThanOrEqual(runs[i - 1]!.finished_at!);
    expect(JSON.parse(runs.at(-1)!.report!).orphaned_on_server).toEqual([orphan]);
  });
});
