/**
 * The campaigns pages and the live stream over real HTTP, without a browser:
 * a tenant sees only its own campaigns (another's answers 404), the pages and
 * GET /v1/campaigns agree on each campaign's buys, a GET changes nothing, and a
 * burst of changes that raise no notification reaches a page as one refresh (or
 * two: the first at once, the last trailing), never one per change.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CampaignRow } from '../../src/store/index.js';
import { newOperationRow } from '../../src/store/operation-row.js';
import { inWriteTransaction } from '../../src/store/tx.js';
import { DashboardClient } from '../helpers/dashboard-client.js';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';
import { openSse } from '../helpers/sse-client.js';

describe('dashboard campaigns and live wake-ups', () => {
  let orch: TestOrchestrator;
  let agentId: string;
  let otherTenant: string;
  const mine: string[] = [];
  let theirs: string;

  /** A campaign stored as the engine stores one: the row and its buys (operations with parent_id) in one commit. */
  async function storeCampaign(tenantId: string, agent: string, name: string, budgets: number[], statuses: string[]): Promise<string> {
    const id = `cmp_${randomUUID()}`;
    const now = Date.now();
    const buys = budgets.map((budget, i) =>
      newOperationRow(
        { id: randomUUID(), tenant_id: tenantId, agent_id: agent, type: 'create_media_buy', idempotency_key: `${id}-buy-${i}-key`, request_body: JSON.stringify({ packages: [{ product_id: 'p', budget }] }), created_at: now + i },
        { status: statuses[i]!, parent_id: id },
      ),
    );
    const row: CampaignRow = { id, tenant_id: tenantId, name, governance_agent_id: agent, plan_id: 'plan_x', status: 'running', buy_ids: JSON.stringify([...buys].reverse().map((b) => b.id)), created_at: now, updated_at: now, completed_at: null, created_by: 'test' };
    const store = orch.app.store;
    await inWriteTransaction(store.db, async (trx) => {
      await store.campaigns.insertIn(trx, row);
      for (const b of buys) await store.operations.insertIn(trx, b, { source: 'user', kind: 'created', to: b.status });
    });
    return id;
  }

  beforeAll(async () => {
    orch = await startOrchestrator();
    agentId = await orch.registerAgent({ url: 'http://127.0.0.1:9/mcp' });
    mine.push(await storeCampaign(orch.tenantId, agentId, 'Ours one', [1_000, 2_500], ['completed', 'submitted']));
    // Neither can be done (a buy still runs in each), so no campaign.completed comes in the middle of the tests.
    mine.push(await storeCampaign(orch.tenantId, agentId, 'Ours two', [300, 400, 500], ['rejected', 'failed', 'working']));
    otherTenant = (await orch.app.store.tenants.ensureTenant(`other-${randomUUID().slice(0, 8)}`)).id;
    const otherAgent = await orch.app.store.agents.insert({ tenantId: otherTenant, name: 'their seller', role: 'seller', url: 'http://127.0.0.1:9/mcp', protocol: 'mcp' });
    theirs = await storeCampaign(otherTenant, otherAgent.id, 'Theirs', [9_999], ['submitted']);
  });
  afterAll(async () => {
    await orch?.close();
  });

  const viewer = async () => {
    const c = new DashboardClient(orch.url);
    await c.signIn(await orch.app.store.tenants.createApiKey(orch.tenantId, { name: `viewer-${randomUUID().slice(0, 6)}`, role: 'viewer' }));
    return c;
  };

  it('shows a viewer its tenant’s campaigns only; another tenant’s answers not found', async () => {
    const c = await viewer();
    const list = await c.get('/campaigns');
    expect(list.status).toBe(200);
    for (const id of mine) expect(list.text).toContain(`data-campaign-id="${id}"`);
    expect(list.text).not.toContain(theirs);
    expect(list.text).not.toContain('Theirs');
    const other = await c.get(`/campaigns/${theirs}`);
    expect(other.status).toBe(404);
    expect(other.text).not.toContain('Theirs');
    expect((await c.get('/campaigns/cmp_none')).status).toBe(404);
  });

  it('agrees with GET /v1/campaigns on every campaign: buys in the order asked for, their states and the budget', async () => {
    const c = await viewer();
    const api = (await orch.api('GET', '/v1/campaigns')).body.campaigns as Array<{ id: string; buys: Array<{ id: string; campaign_state: string }>; budget: { planned: number; committed: number } }>;
    expect(api.map((x) => x.id)).toEqual([...mine].reverse());
    for (const campaign of api) {
      expect(campaign).toEqual((await orch.api('GET', `/v1/campaigns/${campaign.id}`)).body);
      const page = await c.get(`/campaigns/${campaign.id}`);
      const shown = [...page.text.matchAll(/<tr data-operation-id="([^"]+)"[^>]*>[\s\S]*?data-buy-state="([^"]+)"/g)].map((m) => [m[1], m[2]]);
      expect(shown).toEqual(campaign.buys.map((b) => [b.id, b.campaign_state]));
      expect(page.text).toContain(`data-budget="planned">${campaign.budget.planned.toLocaleString('en-US')}<`);
    }
  });

  it('never changes anything on a GET of the campaigns pages', async () => {
    const c = await viewer();
    const k = orch.app.store.db.kysely;
    const snapshot = async () => ({
      campaigns: await k.selectFrom('campaigns').selectAll().orderBy('id').execute(),
      operations: await k.selectFrom('operations').select(['id', 'status', 'updated_at']).orderBy('id').execute(),
      events: (await k.selectFrom('operation_events').select('id').execute()).length,
      notifications: (await k.selectFrom('notifications').select('seq').execute()).length,
    });
    const before = await snapshot();
    for (const path of ['/campaigns', `/campaigns/${mine[0]}`, `/campaigns/${theirs}`, '/campaigns?cursor=garbage']) {
      expect((await c.get(path)).status, path).toBeLessThan(500);
      expect((await c.get(path, { 'hx-request': 'true' })).status, path).toBeLessThan(500);
    }
    expect(await snapshot()).toEqual(before);
  });

  it('coalesces a burst of changes without a notification into one or two refreshes, naming them, for its tenant only', async () => {
    const c = await viewer();
    const live = await openSse(`${orch.url}/live`, { cookie: c.cookieHeader() });
    expect(live.status).toBe(200);
    await live.waitForComments((t) => t === 'connected', 1, 5000);
    // Whatever the stream catches up on from before it opened (the buys stored above) comes first: let it pass.
    await new Promise((r) => setTimeout(r, 500));
    const earlier = live.messages.length;
    for (let i = 0; i < 200; i++) orch.app.live.wakes.emit({ tenantId: orch.tenantId, operationIds: [`op-${i % 20}`], many: false });
    orch.app.live.wakes.emit({ tenantId: otherTenant, operationIds: ['not-yours'], many: false });
    await live.waitFor((m) => m.event === 'change', earlier + 1, 5000);
    await new Promise((r) => setTimeout(r, 600));
    const changes = live.messages.slice(earlier).filter((m) => m.event === 'change');
    expect(changes.length).toBeGreaterThanOrEqual(1);
    expect(changes.length, JSON.stringify(changes)).toBeLessThanOrEqual(2);
    const named = new Set(changes.flatMap((m) => m.data.operations as string[]));
    expect(named).toEqual(new Set(Array.from({ length: 20 }, (_, i) => `op-${i}`)));
    // A wake-up moves no position: the stream's id stays a notification seq a reconnect can resume from.
    for (const m of changes) expect(Number(m.id)).toBeGreaterThan(0);
    live.close();
  });

  it('tells a campaign’s page only of its own buys', async () => {
    const c = await viewer();
    const buys = ((await orch.api('GET', `/v1/campaigns/${mine[0]}`)).body.buys as Array<{ id: string }>).map((b) => b.id);
    const page = await c.get(`/campaigns/${mine[0]}`);
    const stream = /sse-connect="([^"]+)"/.exec(page.text)![1]!.replace(/&amp;/g, '&');
    expect(stream).toContain(`campaign=${mine[0]}`);
    const live = await openSse(`${orch.url}${stream}`, { cookie: c.cookieHeader() });
    await live.waitForComments((t) => t === 'connected', 1, 5000);
    await new Promise((r) => setTimeout(r, 500));
    const earlier = live.messages.length;
    orch.app.live.wakes.emit({ tenantId: orch.tenantId, operationIds: ['someone-else'], many: false });
    await new Promise((r) => setTimeout(r, 400));
    orch.app.live.wakes.emit({ tenantId: orch.tenantId, operationIds: [buys[1]!, 'someone-else'], many: false });
    await live.waitFor((m) => m.event === 'change', earlier + 1, 5000);
    await new Promise((r) => setTimeout(r, 400));
    const changes = live.messages.slice(earlier).filter((m) => m.event === 'change');
    expect(changes.map((m) => m.data.operations)).toEqual([[buys[1]]]);
    live.close();
  });
});
