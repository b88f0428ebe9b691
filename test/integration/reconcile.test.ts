/**
 * Reconciliation over real HTTP on loopback with the sandbox seller (AdCP spec, polling, timeouts, retries, reconciliation):
 * orphans on the server are adopted and tracked, operations we lost track of are
 * found and polled at once, reports are returned, stored and tenant-scoped, and the
 * periodic run is shared between instances on one database.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { eventually, startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { postgresAdminUrl, tempPostgres } from '../helpers/databases.js';
import { adoptedOperation } from '../../src/engine/adopt.js';
import { openStore } from '../../src/store/index.js';
import { newOperationRow } from '../../src/store/operation-row.js';
import type { TestDatabase } from '../helpers/databases.js';

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

  it('finds operations we lost track of, reports their task ids with our operation ids beside them, and polls them at once', async () => {
    const ops: any[] = [];
    for (let i = 0; i < 2; i++) {
      const created = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_submitted'), webhook: 'none' });
      expect(created.status).toBe(202);
      expect(created.body.status).toBe('submitted');
      ops.push(created.body);
    }

    // Lose track: the timer row is gone (retried until no poll in flight puts it back).
    const db = orch.app.store.db.kysely;
    for (const op of ops) {
      await eventually(async () => {
        await db.updateTable('operations').set({ next_check_at: null }).where('id', '=', op.id).where('lease_until', 'is', null).execute();
        await new Promise((r) => setTimeout(r, 300));
        const row = await orch.app.store.operations.get(op.id);
        return row?.next_check_at === null && row.lease_until === null ? true : undefined;
      });
    }
    for (const op of ops) seller.completeTask(op.task_id);
    const pollsBefore = ops.map((op) => seller.stats().pollsByTask[op.task_id] ?? 0);
    await new Promise((r) => setTimeout(r, 600));
    for (const [i, op] of ops.entries()) {
      expect((await orch.api('GET', `/v1/operations/${op.id}`)).body.status).toBe('submitted');
      expect(seller.stats().pollsByTask[op.task_id] ?? 0).toBe(pollsBefore[i]);
    }

    const report = (await reconcile({ agent_id: agentId })).body.reports[0];
    // The seller's task ids, as in AdCP spec, polling, timeouts, retries, reconciliation; our operation ids index for index beside them.
    expect([...report.missing_from_server].sort()).toEqual(ops.map((op) => op.task_id).sort());
    expect(report.missing_from_server_operations).toHaveLength(2);
    for (const [i, taskId] of report.missing_from_server.entries()) {
      expect(report.missing_from_server_operations[i]).toBe(ops.find((op) => op.task_id === taskId).id);
    }
    expect(report.orphaned_on_server).toEqual([]);
    for (const op of ops) {
      const done = await waitForStatus(orch, op.id, ['completed'], 5_000);
      const missingEvent = done.events.find((e: any) => e.source === 'reconcile' && e.kind === 'missing_from_server');
      expect(missingEvent.detail).toEqual({ task_id: op.task_id });
      expect(done.events.at(-1)).toMatchObject({ source: 'poll', to: 'completed' });
    }
    // The stored report is the one returned.
    const [stored] = await orch.app.store.reconcile.listForAgent(agentId);
    expect(JSON.parse(stored!.report!)).toEqual(report);
  });

  it('documents the report in OpenAPI: missing_from_server holds task ids, missing_from_server_operations our ids', async () => {
    const spec = (await orch.api('GET', '/openapi.json')).body;
    const schema = spec.paths['/v1/reconcile'].post.responses['200'].content['application/json'].schema;
    const variants = schema.properties.reports.items.anyOf;
    const report = variants.find((v: any) => v.properties.missing_from_server);
    expect(report.properties.missing_from_server).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(report.properties.missing_from_server.description).toMatch(/task ids/);
    expect(report.properties.missing_from_server_operations).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(report.properties.missing_from_server_operations.description).toMatch(/operation ids/);
    expect(report.required).toEqual(expect.arrayContaining(['missing_from_server', 'missing_from_server_operations', 'orphaned_on_server', 'deferred_orphans']));
    expect(variants.find((v: any) => v.properties.error)).toBeDefined();
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
    // Recorded, with the send it waits on, for a follow-up run.
    expect((await orch.app.store.reconcile.deferral(agentId))?.waiting_on).toEqual({ create_media_buy: [calling.id] });

    // That call ended without a task id: the task is nobody's, so it is adopted.
    await orch.app.store.db.kysely.updateTable('operations').set({ status: 'failed' }).where('id', '=', calling.id).execute();
    const second = (await reconcile({ agent_id: agentId })).body.reports[0];
    expect(second.orphaned_on_server).toEqual([taskId]);
    expect(second.deferred_orphans).toEqual([]);
    expect(await orch.app.store.reconcile.deferral(agentId)).toBeUndefined();
    seller.completeTask(taskId);
    const adopted = (await orch.app.store.operations.findByTask(agentId, taskId))!;
    await waitForStatus(orch, adopted.id, ['completed']);
  });

  it('returns reports for every seller of the tenant, stores them, and hides other tenants', async () => {
    const res = await reconcile();
    expect(res.status).toBe(200);
    expect(res.body.reports).toHaveLength(1);
    const report = res.body.reports[0];
    expect(report).toMatchObject({ agent_id: agentId, orphaned_on_server: [], missing_from_server: [], missing_from_server_operations: [] });
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

  it('`adcp-orchestrator reconcile --agent --json` prints the report as JSON', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [BIN, 'reconcile', '--agent', agentId, '--json', '--url', orch.url, '--api-key', orch.apiKey]);
    const { reports } = JSON.parse(stdout);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ agent_id: agentId, orphaned_on_server: [], missing_from_server: [] });
  });
});

/**
 * One of our sends to the agent, unresolved: sent, its reply lost, awaiting its resend (same key,
 * same bytes) on a timer `resendInMs` away. A task the seller lists may be that send's reply.
 */
async function insertUnresolvedSend(orch: TestOrchestrator, agentId: string, resendInMs: number) {
  const agent = (await orch.app.store.agents.get(agentId))!;
  const now = Date.now();
  const key = randomUUID();
  const row = newOperationRow(
    {
      id: randomUUID(),
      tenant_id: agent.tenant_id,
      agent_id: agent.id,
      type: 'create_media_buy',
      idempotency_key: key,
      request_body: JSON.stringify({ ...mediaBuyRequest('sandbox_submitted'), idempotency_key: key }),
      created_at: now - 1000,
    },
    { status: 'calling_adcp', next_check_at: now + resendInMs, check_kind: 'send', attempt: 1 },
  );
  await orch.app.store.operations.insert(row, { source: 'call', kind: 'transition', from: 'requested', to: 'calling_adcp' });
  return row;
}

describe('deferred orphans are followed up by themselves', () => {
  let seller: SandboxSeller;
  let database: TestDatabase;
  let orch: TestOrchestrator | undefined;
  let agentId: string;
  const LONG_INTERVAL = { ADCP_ORCH_RECONCILE_INTERVAL_MS: '900000' };

  beforeAll(async () => {
    seller = await startSandboxSeller({ submittedDelayMs: 600_000, workingDelayMs: 600_000 });
    // Register the agent first, so the start-up run of the instance under test (0–5 s after its
    // start) includes it and can be waited for: later, only a follow-up can reconcile this agent.
    const setup = await startOrchestrator({ keepDatabase: true });
    database = setup.database;
    agentId = await setup.registerAgent({ url: seller.url });
    await setup.close();
    orch = await startOrchestrator({ env: LONG_INTERVAL, database, keepDatabase: true });
    await eventually(async () => ((await orch!.app.store.reconcile.listForAgent(agentId)).some((r) => r.finished_at !== null) ? true : undefined), 15_000);
  });
  afterAll(async () => {
    await orch?.close();
    await database?.drop();
    await seller?.close();
  });

  const storedReports = async (o: TestOrchestrator) =>
    (await o.app.store.reconcile.listForAgent(agentId, 100)).filter((r) => r.report !== null).map((r) => JSON.parse(r.report!));

  it('adopts a deferred orphan soon after the send it waited on resolves, with no reconcile asked for and the periodic run 15 min away', async () => {
    const o = orch!;
    const blocking = await insertUnresolvedSend(o, agentId, 3_600_000);
    const orphan = seller.createTaskBehindBuyersBack();
    const first = (await o.api('POST', '/v1/reconcile', { agent_id: agentId })).body.reports[0];
    expect(first.deferred_orphans).toEqual([orphan]);
    expect((await o.app.store.reconcile.deferral(agentId))?.waiting_on).toEqual({ create_media_buy: [blocking.id] });
    const adcp = (o.app.reconciler as unknown as { adcp: { listTasks: (...a: unknown[]) => unknown } }).adcp;
    const listSpy = vi.spyOn(adcp, 'listTasks');
    try {
      // While the send stays unresolved the seller is not asked again, past the shortest gap
      // between a deferring run and its follow-up (5 s): the watch only reads our database.
      await new Promise((r) => setTimeout(r, 6_000));
      expect(listSpy).not.toHaveBeenCalled();
      expect(await o.app.store.operations.findByTask(agentId, orphan)).toBeUndefined();

      // The resend timer comes due: the engine resends, the seller answers with the task of that send.
      await o.app.store.db.kysely.updateTable('operations').set({ next_check_at: Date.now() }).where('id', '=', blocking.id).execute();
      o.app.scheduler.wake();
      const sent = await waitForStatus(o, blocking.id, ['submitted']);
      expect(sent.task_id).not.toBe(orphan);
      const resolvedAt = Date.now();

      // …and the orphan is adopted by a run nobody asked for, well inside the minute the fallback allows.
      const adopted = await eventually(async () => (await o.app.store.operations.findByTask(agentId, orphan)) ?? undefined, 20_000);
      expect(Date.now() - resolvedAt).toBeLessThan(20_000);
      expect(adopted.status).toBe('submitted');
      expect(listSpy).toHaveBeenCalledTimes(1);
    } finally {
      listSpy.mockRestore();
    }
    const followUp = (await storedReports(o))[0];
    expect(followUp.orphaned_on_server).toEqual([orphan]);
    expect(followUp.deferred_orphans).toEqual([]);
    expect(await o.app.store.reconcile.deferral(agentId)).toBeUndefined();
    // The follow-up ran under the agent's run lease, given up as it ended; the period slot of the
    // start-up run is untouched (the next periodic run is still most of 15 min away).
    const running = await o.app.store.jobLeases.get(`reconcile:${agentId}`);
    expect(running?.owner).toBe(o.app.instanceId);
    expect(running!.lease_until).toBeLessThanOrEqual(Date.now());
    const period = await o.app.store.jobLeases.get(`reconcile-period:${agentId}`);
    expect(period!.lease_until - Date.now()).toBeGreaterThan(10 * 60_000);
  });

  it('keeps the deferral across a restart: the next process follows it up, even with periodic runs off', async () => {
    const blocking = await insertUnresolvedSend(orch!, agentId, 3_600_000);
    const orphan = seller.createTaskBehindBuyersBack();
    const first = (await orch!.api('POST', '/v1/reconcile', { agent_id: agentId })).body.reports[0];
    expect(first.deferred_orphans).toEqual([orphan]);
    await orch!.close();
    orch = undefined;

    // While no process runs, the send is settled (say, by an operator or another instance): it
    // failed without a task, so the listed task is nobody's. No change notice will ever say so.
    const store = await openStore(database.url);
    try {
      await store.db.kysely.updateTable('operations').set({ status: 'failed', next_check_at: null, check_kind: null }).where('id', '=', blocking.id).execute();
      expect(await store.reconcile.deferral(agentId)).toBeDefined();
    } finally {
      await store.close();
    }

    // Periodic and start-up runs off: only the stored deferral can bring this agent up again.
    orch = await startOrchestrator({ env: { ADCP_ORCH_RECONCILE_INTERVAL_MS: '0' }, database, keepDatabase: true });
    const adopted = await eventually(async () => (await orch!.app.store.operations.findByTask(agentId, orphan)) ?? undefined, 20_000);
    expect((await orch!.api('GET', `/v1/operations/${adopted.id}`)).body.events[0]).toMatchObject({ source: 'reconcile', kind: 'adopted' });
    expect((await storedReports(orch))[0].orphaned_on_server).toEqual([orphan]);
    expect(await orch.app.store.reconcile.deferral(agentId)).toBeUndefined();
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
