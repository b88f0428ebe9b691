/**
 * The media buys pages and their live streams over real HTTP, without a browser: a
 * tenant sees only its own buys (another's answers 404 and shows nothing of it); the
 * list agrees with GET /v1/media-buys, page by page; a filter value that cannot be
 * right is ignored and said so; a buy's stream carries only that buy's changes and the
 * list's only buys'; a refused action (no CSRF token, a viewer, an ended buy) changes
 * nothing; a GET changes nothing.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CampaignRow, MediaBuyRow } from '../../src/store/index.js';
import { newMediaBuyRow } from '../../src/store/media-buy-row.js';
import { newOperationRow } from '../../src/store/operation-row.js';
import { inWriteTransaction } from '../../src/store/tx.js';
import { csrfIn, DashboardClient } from '../helpers/dashboard-client.js';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';
import { openSse } from '../helpers/sse-client.js';

const HOUR = 3_600_000;

describe('dashboard media buys pages', () => {
  let orch: TestOrchestrator;
  const mine: MediaBuyRow[] = [];
  let theirs: MediaBuyRow;

  function buyRow(tenantId: string, agentId: string, i: number, over: Partial<MediaBuyRow> = {}): MediaBuyRow {
    const now = Date.now() - 1000 + i;
    return newMediaBuyRow(
      { id: `buy_${randomUUID()}`, tenant_id: tenantId, agent_id: agentId, operation_id: randomUUID(), media_buy_id: `mb_${i}_${randomUUID().slice(0, 6)}`, created_at: now },
      {
        status: 'active', revision: 1, flight_start: now, flight_end: now + 8 * HOUR, budget_amount: 1000, currency: 'USD', spend: 10 * i,
        pacing_state: i % 2 ? 'under' : 'on_track', report_frequency: 'hourly', reporting_auth: 'hmac', ...over,
      },
    );
  }
  async function store(rows: MediaBuyRow[]): Promise<void> {
    await inWriteTransaction(orch.app.store.db, async (trx) => {
      for (const r of rows) await orch.app.store.mediaBuys.insertIn(trx, r, [{ source: 'call', kind: 'created', to: r.status }]);
    });
  }

  beforeAll(async () => {
    // One listing page is 50 buys: 55 make a second page.
    orch = await startOrchestrator();
    const agentId = await orch.registerAgent({ url: 'http://127.0.0.1:9/mcp' });
    for (let i = 0; i < 55; i++) mine.push(buyRow(orch.tenantId, agentId, i, i === 0 ? { status: 'completed', ended_at: Date.now() } : {}));
    await store(mine);
    const other = (await orch.app.store.tenants.ensureTenant(`other-${randomUUID().slice(0, 8)}`)).id;
    const otherAgent = await orch.app.store.agents.insert({ tenantId: other, name: 'their seller', role: 'seller', url: 'http://127.0.0.1:9/mcp', protocol: 'mcp' });
    theirs = buyRow(other, otherAgent.id, 99, { media_buy_id: 'mb_theirs_secret' });
    await store([theirs]);
  });
  afterAll(async () => {
    await orch?.close();
  });

  const signedIn = async (role: 'viewer' | 'operator') => {
    const c = new DashboardClient(orch.url);
    await c.signIn(await orch.app.store.tenants.createApiKey(orch.tenantId, { name: `${role}-${randomUUID().slice(0, 6)}`, role }));
    return c;
  };
  const rowIds = (text: string) => [...text.matchAll(/<tr data-buy-id="([^"]+)"/g)].map((m) => m[1]);

  it('lists the tenant’s buys page by page as GET /v1/media-buys does; another tenant’s buy is not found', async () => {
    const c = await signedIn('viewer');
    const first = await c.get('/media-buys?pacing=under');
    const api1 = (await orch.api('GET', '/v1/media-buys?pacing=under&limit=50')).body;
    expect(rowIds(first.text)).toEqual(api1.media_buys.map((b: { id: string }) => b.id));
    const all = await c.get('/media-buys');
    const page1 = (await orch.api('GET', '/v1/media-buys?limit=50')).body;
    expect(rowIds(all.text)).toEqual(page1.media_buys.map((b: { id: string }) => b.id));
    const next = /rel="next" href="([^"]+)"/.exec(all.text)![1]!.replace(/&amp;/g, '&');
    const page2 = (await orch.api('GET', `/v1/media-buys?limit=50&cursor=${page1.next_cursor}`)).body;
    expect(rowIds((await c.get(next)).text)).toEqual(page2.media_buys.map((b: { id: string }) => b.id));
    expect(page2.media_buys).toHaveLength(5);
    expect(all.text).not.toContain('mb_theirs_secret');
    const other = await c.get(`/media-buys/${theirs.id}`);
    expect(other.status).toBe(404);
    expect(other.text).not.toContain('mb_theirs_secret');
  });

  it('ignores a filter or page link that cannot be right, and says so, escaped', async () => {
    const c = await signedIn('viewer');
    const page = await c.get(`/media-buys?status=${encodeURIComponent('<b>nope</b>')}&pacing=sideways&cursor=garbage`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Ignored status &quot;&lt;b&gt;nope&lt;/b&gt;&quot; and pacing &quot;sideways&quot; and a page link that is not one of ours.');
    expect(rowIds(page.text)).toHaveLength(50);
  });

  it('tells a buy’s page of that buy only, and the list of buys only', async () => {
    const c = await signedIn('viewer');
    const buy = mine[3]!;
    const page = await c.get(`/media-buys/${buy.id}`);
    const stream = /sse-connect="([^"]+)"/.exec(page.text)![1]!.replace(/&amp;/g, '&');
    expect(stream).toContain(`buy=${buy.id}`);
    const list = /sse-connect="([^"]+)"/.exec((await c.get('/media-buys')).text)![1]!.replace(/&amp;/g, '&');
    expect(list).toContain('buys=1');
    const one = await openSse(`${orch.url}${stream}`, { cookie: c.cookieHeader() });
    const any = await openSse(`${orch.url}${list}`, { cookie: c.cookieHeader() });
    // Another tenant's buy named: that stream hears nothing at all, not every change of ours.
    const foreign = await openSse(`${orch.url}/live?buy=${theirs.id}`, { cookie: c.cookieHeader() });
    await one.waitForComments((t) => t === 'connected', 1, 5000);
    await any.waitForComments((t) => t === 'connected', 1, 5000);
    await foreign.waitForComments((t) => t === 'connected', 1, 5000);
    const wake = (ids: string[]) => orch.app.live.wakes.emit({ tenantId: orch.tenantId, operationIds: ids, many: false });
    wake(['some-operation', mine[4]!.operation_id]);
    await new Promise((r) => setTimeout(r, 400));
    wake([mine[4]!.id, buy.operation_id]);
    await one.waitFor((m) => m.event === 'change', 1, 5000);
    await any.waitFor((m) => m.event === 'change', 1, 5000);
    await new Promise((r) => setTimeout(r, 400));
    // The buy's page heard of its create operation only; the list of the other buy only.
    expect(one.messages.filter((m) => m.event === 'change').map((m) => m.data.operations)).toEqual([[buy.operation_id]]);
    expect(any.messages.filter((m) => m.event === 'change').map((m) => m.data.operations)).toEqual([[mine[4]!.id]]);
    expect(foreign.messages.filter((m) => m.event === 'change')).toEqual([]);
    one.close();
    any.close();
    foreign.close();
  });

  it('refuses an action without a CSRF token, from a viewer, or on an ended buy, and changes nothing', async () => {
    const operations = async () => (await orch.app.store.db.kysely.selectFrom('operations').select('id').execute()).length;
    const before = await operations();
    const viewer = await signedIn('viewer');
    const viewerPage = await viewer.get(`/media-buys/${mine[5]!.id}`);
    expect(viewerPage.text).not.toContain('data-action=');
    expect((await viewer.post(`/media-buys/${mine[5]!.id}/pause`, { _csrf: csrfIn(viewerPage.text) })).status).toBe(403);
    const operator = await signedIn('operator');
    const page = await operator.get(`/media-buys/${mine[5]!.id}`);
    expect(page.text).toContain('data-action="pause"');
    expect((await operator.post(`/media-buys/${mine[5]!.id}/pause`, {})).status).toBe(403);
    // The first buy ended: nothing is offered, and a post is refused with the engine's reason.
    const ended = await operator.get(`/media-buys/${mine[0]!.id}`);
    expect(ended.text).not.toContain('data-action=');
    for (const action of ['pause', 'cancel']) {
      const refused = await operator.post(`/media-buys/${mine[0]!.id}/${action}`, { _csrf: csrfIn(page.text) });
      expect(refused.status).toBe(409);
      expect(refused.text).toContain('is completed');
    }
    expect((await operator.post(`/media-buys/${theirs.id}/pause`, { _csrf: csrfIn(page.text) })).status).toBe(404);
    expect(await operations()).toBe(before);
  });

  it('shows a campaign’s delivered spend, summed from its live buys, beside planned and committed', async () => {
    const agentId = mine[0]!.agent_id;
    const id = `cmp_${randomUUID()}`;
    const now = Date.now();
    const ops = [0, 1, 2].map((i) =>
      newOperationRow({ id: randomUUID(), tenant_id: orch.tenantId, agent_id: agentId, type: 'create_media_buy', idempotency_key: `${id}-buy-${i}-key`, request_body: JSON.stringify({ packages: [{ product_id: 'p', budget: 1000 }] }), created_at: now + i }, { status: i < 2 ? 'completed' : 'submitted', parent_id: id }),
    );
    const campaign: CampaignRow = { id, tenant_id: orch.tenantId, name: 'Delivering', governance_agent_id: agentId, plan_id: 'plan_d', status: 'running', buy_ids: JSON.stringify(ops.map((o) => o.id)), created_at: now, updated_at: now, completed_at: null, created_by: 'test' };
    // Two of the three buys made live buys at the seller: 120.5 and 300.25 delivered.
    const live = [buyRow(orch.tenantId, agentId, 70, { operation_id: ops[0]!.id, campaign_id: id, spend: 120.5 }), buyRow(orch.tenantId, agentId, 71, { operation_id: ops[1]!.id, campaign_id: id, spend: 300.25 })];
    await inWriteTransaction(orch.app.store.db, async (trx) => {
      await orch.app.store.campaigns.insertIn(trx, campaign);
      for (const o of ops) await orch.app.store.operations.insertIn(trx, o, { source: 'user', kind: 'created', to: o.status });
    });
    await store(live);
    const c = await signedIn('viewer');
    const list = await c.get('/campaigns');
    expect(list.text).toMatch(new RegExp(`<tr data-campaign-id="${id}">[^]*?data-delivered="420.75"`));
    const page = await c.get(`/campaigns/${id}`);
    expect(page.text).toContain('<dd data-budget="delivered">420.75</dd>');
    expect(page.text).toMatch(new RegExp(`<tr data-operation-id="${ops[0]!.id}"[^]*?data-delivered="120.5"><a href="/media-buys/${live[0]!.id}"`));
    expect(page.text).toMatch(new RegExp(`<tr data-operation-id="${ops[2]!.id}"[^]*?data-delivered="">—`));
    // The buys list filters by the campaign.
    expect(rowIds((await c.get(`/media-buys?campaign=${id}`)).text).sort()).toEqual(live.map((b) => b.id).sort());
  });

  it('never changes anything on a GET', async () => {
    const c = await signedIn('viewer');
    const k = orch.app.store.db.kysely;
    const snapshot = async () => ({
      buys: await k.selectFrom('media_buys').select(['id', 'status', 'updated_at']).orderBy('id').execute(),
      events: (await k.selectFrom('media_buy_events').select('id').execute()).length,
      operations: (await k.selectFrom('operations').select('id').execute()).length,
    });
    const before = await snapshot();
    for (const path of ['/media-buys', `/media-buys/${mine[1]!.id}`, `/media-buys/${theirs.id}`, '/media-buys?status=paused', `/media-buys/${mine[1]!.id}/pause`]) {
      expect((await c.get(path)).status, path).toBeLessThan(500);
    }
    expect(await snapshot()).toEqual(before);
  });
});
