/**
 * Reconciliation over real HTTP on loopback with the sandbox seller (PROTOCOL.md §6):
 * orphans on the server are adopted and tracked, operations we lost track of are
 * found and polled at once, reports are returned, stored and tenant-scoped, and the
 * periodic run is shared between instances on one database.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { eventually, startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { postgresAdminUrl, tempPostgres } from '../helpers/databases.js';
import { adoptedOperation } from '../../src/engine/adopt.js';

const BIN = fileURLToPath(new URL('../../bin/adcp-orchestrator.js', import.meta.url));

describe('reconcile on demand', () => {
  let seller: SandboxSeller;
  let orch: TestOrchestrator;
  let agentId: string;

  beforeAll(async () => {
    // Submitted tasks never finish by themselves here: the tests decide when.
    seller = await startSandboxSeller({ submittedDelayMs: 600_000, workingDelayMs: 600_000 });
    orch = await startOrchestrator({
      // Periodic runs off: each test asks for its own run. Two tasks per page, so listing takes several pages.
      env: { ADCP_ORCH_RECONCILE_INTERVAL_MS: '0', ADCP_ORCH_RECONCILE_PAGE_SIZE: '2' },
    });
    agentId = await orch.registerAgent({ url: seller.url });
  });
  afterAll(async () => {
    await orch?.close();
    await seller?.close();
  });

  const reconcile = async (body?: unknown) => orch.api('POST', '/v1/reconcile', body);

  it('adopts tasks made behind our back (over several pages) and tracks them to completion', async () => {
    const taskIds = [
      seller.createTaskBehindBuyersBack(),
      seller.createTaskBehindBuyersBack(),
      seller.createTaskBehindBuyersBack(),
      seller.createTaskBehindBuyersBack({ status: 'working' }),
      seller.createTaskBehindBuyersBack({ status: 'input-required', message: 'approve?' }),
    ];
    const adcp = (orch.app.reconciler as unknown as { adcp: { listTasks: (...a: unknown[]) => unknown } }).adcp;
    const listSpy = vi.spyOn(adcp, 'listTasks');

    const res = await reconcile({ agent_id: agentId });
    expect(res.status).toBe(200);
    const [report] = res.body.reports;
    expect(report.agent_id).toBe(agentId);
    expect([...report.orphaned_on_server].sort()).toEqual([...taskIds].sort());
    expect(report.missing_from_server).toEqual([]);
    expect(report.total_pending_server).toBe(5);
    expect(report.total_pending_local).toBe(0);
    // 5 tasks at 2 per page: 3 pages, each asking only for pending statuses.
    expect(listSpy).toHaveBeenCalledTimes(3);
    const query = listSpy.mock.calls[0]![1] as { statuses: string[]; maxResults: number };
    expect(query.maxResults).toBe(2);
    expect([...query.statuses].sort()).toEqual(['auth-required', 'input-required', 'submitted', 'unknown', 'working']);
    listSpy.mockRestore();

    const ops = (await orch.api('GET', `/v1/operations?agent_id=${agentId}&limit=50`)).body.operations;
    const adopted = ops.filter((o: any) => taskIds.includes(o.task_id));
    expect(adopted).toHaveLength(5);
    for (const op of adopted) {
      const full = (await orch.api('GET', `/v1/operations/${op.id}`)).body;
      expect(full.type).toBe('create_media_buy');
      expect(full.events[0]).toMatchObject({ source: 'reconcile', kind: 'adopted', to: seller.getTask(op.task_id)!.status });
      expect(full.next_check_at).not.toBeNull();
    }
    expect(adopted.find((o: any) => o.status === 'input-required')?.needs_input).toBe(true);

    // A second run finds nothing new: every listed task now has its operation.
    const again = (await reconcile({ agent_id: agentId })).body.reports[0];
    expect(again.orphaned_on_server).toEqual([]);
    expect(again.total_pending_local).toBe(5);

    // Tracked like any other operation: the seller finishes them, polling brings that home.
    for (const id of taskIds) seller.completeTask(id);
    for (const op of adopted) {
      const done = await waitForStatus(orch, op.id, ['completed']);
      expect(done.result.media_buy_id).toMatch(/^mb_/);
      expect(done.events.at(-1)).toMatchObject({ source: 'poll', to: 'completed' });
    }
  });

  it('finds an operation we lost track of and polls it at once', async () => {
    const created = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_submitted'), webhook: 'none' });
    expect(created.status).toBe(202);
    expect(created.body.status).toBe('submitted');
    const op = created.body;

    // Lose track: the timer row is gone (retried until no poll in flight puts it back).
    const db = orch.app.store.db.kysely;
    await eventually(async () => {
      await db.updateTable('operations').set({ next_check_at: null }).where('id', '=', op.id).where('lease_until', 'is', null).execute();
      await new Promise((r) => setTimeout(r, 300));
      const row = await orch.app.store.operations.get(op.id);
      return row?.next_check_at === null && row.lease_until === null ? true : undefined;
    });
    seller.completeTask(op.task_id);
    const pollsBefore = seller.stats().pollsByTask[op.task_id] ?? 0;
    await new Promise((r) => setTimeout(r, 600));
    expect((await orch.api('GET', `/v1/operations/${op.id}`)).body.status).toBe('submitted');
    expect(seller.stats().pollsByTask[op.task_id] ?? 0).toBe(pollsBefore);

    const report = (await reconcile({ agent_id: agentId })).body.reports[0];
    expect(report.missing_from_server).toEqual([op.id]);
    expect(report.orphaned_on_server).toEqual([]);
    const done = await waitForStatus(orch, op.id, ['completed'], 5_000);
    const kinds = done.events.map((e: any) => `${e.source}:${e.kind}`);
    expect(kinds).toContain('reconcile:missing_from_server');
    expect(done.events.at(-1)).toMatchObject({ source: 'poll', to: 'completed' });
  });

  it('leaves alone a task that may be the reply of one of our calls still unresolved, adopting it once that call is settled', async () => {
    // One of our calls is mid-flight (or awaiting its resend): no timer, so the scheduler leaves it be.
    const agent = (await orch.app.store.agents.get(agentId))!;
    const now = Date.now();
    const { row } = adoptedOperation(agent, { taskId: 'placeholder', taskType: 'create_media_buy', status: 'submitted' }, orch.app.operations.options, now - 1000, Math.random);
    const calling = { ...row, status: 'calling_adcp', task_id: null, next_check_at: null, check_kind: null, request_body: '{"x":1}' };
    await orch.app.store.operations.insert(calling, { source: 'user', kind: 'created', to: 'calling_adcp' });

    const taskId = seller.createTaskBehindBuyersBack();
    const first = (await reconcile({ agent_id: agentId })).body.reports[0];
    expect(first.deferred_orphans).toEqual([taskId]);
    expect(first.orphaned_on_server).toEqual([]);
    expect(await orch.app.store.operations.findByTask(agentId, taskId)).toBeUndefined();

    // That call ended without a task id: the task is nobody's, so it is adopted.
    await orch.app.store.db.kysely.updateTable('operations').set({ status: 'failed' }).where('id', '=', calling.id).execute();
    const second = (await reconcile({ agent_id: agentId })).body.reports[0];
    expect(second.orphaned_on_server).toEqual([taskId]);
    expect(second.deferred_orphans).toEqual([]);
    seller.completeTask(taskId);
    const adopted = (await orch.app.store.operations.findByTask(agentId, taskId))!;
    await waitForStatus(orch, adopted.id, ['completed']);
  });

  it('returns reports for every seller of the tenant, stores them, and hides other tenants', async () => {
    const res = await reconcile();
    expect(res.status).toBe(200);
    expect(res.body.reports).toHaveLength(1);
    const report = res.body.reports[0];
    expect(report).toMatchObject({ agent_id: agentId, orphaned_on_server: [], missing_from_server: [] });
    expect(Date.parse(report.finished_at)).toBeGreaterThanOrEqual(Date.parse(report.started_at));

    const stored = await orch.app.store.reconcile.listForAgent(agentId);
    expect(stored.length).toBeGreaterThanOrEqual(4);
    expect(stored[0]!.finished_at).not.toBeNull();
    expect(stored[0]!.error).toBeNull();
    expect(JSON.parse(stored[0]!.report!)).toEqual(report);

    const other = await orch.app.store.tenants.ensureTenant('other-tenant');
    const otherKey = await orch.app.store.tenants.createApiKey(other.id);
    const asOther = (body?: unknown) =>
      fetch(`${orch.url}/v1/reconcile`, {
        method: 'POST',
        headers: { authorization: `Bearer ${otherKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    const denied = await asOther({ agent_id: agentId });
    expect(denied.status).toBe(404);
    expect((await denied.json()).error.code).toBe('agent_not_found');
    const none = await asOther();
    expect(none.status).toBe(200);
    expect((await none.json()).reports).toEqual([]);
  });

  it('refuses bad input with a code', async () => {
    const unknown = await reconcile({ agent_id: 'no-such-agent' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('agent_not_found');
    const extra = await reconcile({ agent_id: agentId, everything: true });
    expect(extra.status).toBe(400);
    expect(extra.body.error.code).toBe('invalid_request');
    const wrongType = await reconcile({ agent_id: 42 });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.code).toBe('invalid_request');
    const noKey = await fetch(`${orch.url}/v1/reconcile`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(noKey.status).toBe(401);
  });

  it('stores and returns a failed run when the seller cannot be reached', async () => {
    const deadId = await orch.registerAgent({ name: 'gone', url: 'http://127.0.0.1:9/mcp' });
    const res = await reconcile({ agent_id: deadId });
    expect(res.status).toBe(200);
    expect(res.body.reports[0]).toMatchObject({ agent_id: deadId, error: { code: expect.any(String) } });
    const [stored] = await orch.app.store.reconcile.listForAgent(deadId);
    expect(stored!.report).toBeNull();
    expect(JSON.parse(stored!.error!).code).toBe(res.body.reports[0].error.code);
  });

  it('`adcp-orchestrator reconcile --agent` prints the report as JSON', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [BIN, 'reconcile', '--agent', agentId, '--url', orch.url, '--api-key', orch.apiKey]);
    const reports = JSON.parse(stdout);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ agent_id: agentId, orphaned_on_server: [], missing_from_server: [] });
  });
});

describe('periodic reconcile', () => {
  let seller: SandboxSeller;
  let a: TestOrchestrator;
  let b: TestOrchestrator | undefined;
  let agentId: string;

  beforeAll(async () => {
    seller = await startSandboxSeller({ submittedDelayMs: 600_000 });
    const env = { ADCP_ORCH_RECONCILE_INTERVAL_MS: '1000' };
    // Several instances share a database only on PostgreSQL (a SQLite file has one serving process).
    a = await startOrchestrator({ env, ...(postgresAdminUrl ? { database: await tempPostgres() } : {}) });
    // A second instance on the same database competes for the same job leases.
    if (postgresAdminUrl) b = await startOrchestrator({ env, database: a.database, keepDatabase: true });
    agentId = await a.registerAgent({ url: seller.url });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await seller?.close();
  });

  it('runs by itself, adopts orphans, and one instance at a time reconciles an agent (two instances where TEST_DATABASE_URL gives PostgreSQL)', async () => {
    const taskId = seller.createTaskBehindBuyersBack();
    const adopted = await eventually(async () => {
      const row = await a.app.store.operations.findByTask(agentId, taskId);
      return row ?? undefined;
    }, 10_000);
    expect(adopted.status).toBe('submitted');

    // Let a few periods pass, then check that runs never overlapped and were spaced by the lease.
    await new Promise((r) => setTimeout(r, 3_000));
    const runs = (await a.app.store.reconcile.listForAgent(agentId, 100)).filter((r) => r.finished_at !== null).reverse();
    expect(runs.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < runs.length; i++) {
      expect(runs[i]!.started_at).toBeGreaterThanOrEqual(runs[i - 1]!.finished_at!);
      expect(runs[i]!.started_at - runs[i - 1]!.started_at).toBeGreaterThanOrEqual(700);
    }
    const lease = await a.app.store.jobLeases.get(`reconcile:${agentId}`);
    expect([a.app.instanceId, b?.app.instanceId]).toContain(lease?.owner);
  });
});
