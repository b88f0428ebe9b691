/**
 * Two orchestrators on one PostgreSQL database: a change that raises no
 * notification (the seller's `working`, by webhook to instance A) wakes a
 * dashboard page's stream (GET /live) on instance B, by NOTIFY alone (the
 * fallback poll is off), where before only the page's 30 s refresh would show it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdcpClient } from '../../src/adcp/client.js';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { DashboardClient } from '../helpers/dashboard-client.js';
import { postgresAdminUrl, tempPostgres, type TestDatabase } from '../helpers/databases.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { openSse, type SseClient } from '../helpers/sse-client.js';

const suite = postgresAdminUrl ? describe : describe.skip;

suite('dashboard live stream across two instances on PostgreSQL', () => {
  let database: TestDatabase;
  let seller: SandboxSeller;
  let a: TestOrchestrator;
  let b: TestOrchestrator;
  let agentId: string;
  const clients: SseClient[] = [];

  beforeAll(async () => {
    database = await tempPostgres();
    // A working task stays working: no later notification can wake the stream instead.
    seller = await startSandboxSeller({ workingDelayMs: 600_000 });
    const env = { ADCP_ORCH_SSE_FALLBACK_POLL_MS: '0' };
    a = await startOrchestrator({ database, keepDatabase: true, env });
    b = await startOrchestrator({ database, keepDatabase: true, env });
    agentId = await a.registerAgent({ url: seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } });
  }, 60_000);

  afterAll(async () => {
    for (const c of clients) c.close();
    await a?.close();
    await b?.close();
    await seller?.close();
    await database?.drop();
  });

  it('wakes a page on B when an operation goes working on A', async () => {
    const res = await a.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_input_required'), webhook: 'rfc9421' });
    expect(res.status).toBe(202);
    const id = res.body.id as string;
    const waiting = await waitForStatus(a, id, ['input-required']);
    // The seller's webhooks go to A: the change is made there.
    expect(waiting.request.push_notification_config.url.startsWith(`${a.url}/`)).toBe(true);

    const dash = new DashboardClient(b.url);
    expect((await dash.signIn(b.apiKey)).status).toBe(303);
    const live = await openSse(`${b.url}/live?operation=${encodeURIComponent(id)}`, { cookie: dash.cookieHeader() });
    clients.push(live);
    expect(live.status).toBe(200);
    await live.waitForComments((text) => text === 'connected', 1, 5000);

    await createAdcpClient().callTask({ url: seller.url, protocol: 'mcp' }, 'sandbox_respond', { task_id: waiting.task_id, approve: true, then: 'working' });
    await live.waitFor((m) => m.event === 'change' && (m.data.operations as string[]).includes(id), 1, 5000);

    const op = (await a.api('GET', `/v1/operations/${id}`)).body;
    expect(op.status).toBe('working');
    expect(op.events.find((e: { to: string }) => e.to === 'working')?.source).toBe('webhook');
    // No notification carried it: the wake-up did.
    const notes = await a.app.store.db.kysely.selectFrom('notifications').select('type').where('operation_id', '=', id).execute();
    expect(notes.map((n) => n.type)).toEqual(['operation.created', 'operation.input_required']);
  });
});
