/**
 * The reads we make of sellers, as our builders make them, are valid AdCP 3.0.6 requests:
 * `get_media_buys` (status reads, grouped; a refresh; the natural-key lookup before a late
 * resend), `get_media_buy_delivery` (background reads, a refresh), `list_creatives`
 * (creative reviews), `tasks/get` (polls) and `tasks/list` (reconciliation). Each family
 * also has a broken input the check refuses, so these tests can fail.
 */
import { describe, expect, it } from 'vitest';
import { getTaskArgs, listTasksArgs } from '../../../src/adcp/client.js';
import { LIST_PAGE_SIZE, listCreatives } from '../../../src/adcp/creative-reads.js';
import { getMediaBuyDelivery, getMediaBuys } from '../../../src/adcp/media-buy-reads.js';
import type { AdcpClient, AgentEndpoint, TaskReply } from '../../../src/adcp/types.js';
import type { AdcpTaskStatus } from '../../../src/domain/status.js';
import type { ChangeBus } from '../../../src/engine/change-bus.js';
import { lookUpMediaBuy, lookupArgs } from '../../../src/engine/media-buy-lookup.js';
import { MediaBuyService } from '../../../src/engine/media-buys/buy-service.js';
import { MAX_BUYS_PER_STATUS_READ } from '../../../src/engine/media-buys/status-reads.js';
import { PENDING_TASK_STATUSES } from '../../../src/store/reconcile-repo.js';
import type { Store } from '../../../src/store/index.js';
import { ACCOUNT, NOW, capturingOperations, issuesOf, liveBuy, pointersOf, seller } from './request-builders-schema.helpers.js';

const endpoint: AgentEndpoint = { url: seller.url, protocol: 'mcp' };

/** An AdcpClient that keeps each call's task and arguments and answers with `replies` in turn (then an empty page). */
function recordingClient(replies: Array<Record<string, unknown>> = []): { adcp: AdcpClient; calls: Array<{ task: string; params: Record<string, unknown> }> } {
  const calls: Array<{ task: string; params: Record<string, unknown> }> = [];
  const callTask = async (_agent: AgentEndpoint, task: string, params: Record<string, unknown>): Promise<TaskReply> => {
    calls.push({ task, params });
    return { status: 'completed', data: replies.shift() ?? {} };
  };
  return { adcp: { callTask } as unknown as AdcpClient, calls };
}

describe('get_media_buys and get_media_buy_delivery', () => {
  it('background reads (one buy; a status read grouped for a whole page of buys) are valid', async () => {
    const { adcp, calls } = recordingClient();
    const ids = Array.from({ length: MAX_BUYS_PER_STATUS_READ }, (_, i) => `mb_${i}`);
    await getMediaBuyDelivery(adcp, endpoint, { account: ACCOUNT, mediaBuyIds: ['mb_1'] });
    await getMediaBuys(adcp, endpoint, { account: ACCOUNT, mediaBuyIds: ids });
    // A buy whose account is not known is read without one.
    await getMediaBuys(adcp, endpoint, { mediaBuyIds: ['mb_1'] });
    expect(calls.map((c) => c.task)).toEqual(['get_media_buy_delivery', 'get_media_buys', 'get_media_buys']);
    expect(calls[1]!.params.include_snapshot).toBe(true);
    for (const c of calls) expect(issuesOf(c.task, c.params)).toEqual([]);
  });

  it('a refresh (two operations, with what buildOperation adds) is valid', async () => {
    const { operations, sent } = capturingOperations();
    const store = { mediaBuys: { getForTenant: async () => liveBuy(), mutate: async () => ({ outcome: 'noop' }) } } as unknown as Store;
    await new MediaBuyService({ store, operations, bus: {} as ChangeBus, clock: { now: () => NOW, random: () => 0.5 } }).refresh({ tenantId: 't1', buyId: 'buy_1', actor: 'ops', clientKey: 'refresh-1' });
    expect(sent.map((s) => s.task)).toEqual(['get_media_buys', 'get_media_buy_delivery']);
    for (const s of sent) {
      expect(s.request.context).toEqual({ orchestrator_operation_id: expect.any(String) });
      expect(issuesOf(s.task, s.request)).toEqual([]);
    }
  });

  it('the natural-key lookup before a late resend is valid on every page, and names every status', async () => {
    const { adcp, calls } = recordingClient([{ media_buys: [], pagination: { has_more: true, cursor: 'page-2' } }, { media_buys: [], pagination: { has_more: false } }]);
    const created = { account: ACCOUNT, brand: { domain: 'example-brand.com' }, start_time: 'asap', end_time: '2027-12-31T23:59:59Z', packages: [{ product_id: 'prod_display', budget: 5000 }] };
    expect(await lookUpMediaBuy(adcp, endpoint, created, NOW, 5_000)).toEqual({ kind: 'absent' });
    expect(calls.map((c) => c.params.pagination)).toEqual([undefined, { cursor: 'page-2' }]);
    for (const c of calls) {
      expect(c.task).toBe('get_media_buys');
      // Was a bug: without media_buy_ids a seller lists only `active` buys, and a just-created one is pending.
      expect(c.params.status_filter).toEqual(expect.arrayContaining(['pending_creatives', 'pending_start', 'active']));
      expect(issuesOf(c.task, c.params)).toEqual([]);
    }
  });

  it('fail the check for a broken input (no buy ids; an account that is not an account reference)', async () => {
    const { adcp, calls } = recordingClient();
    await getMediaBuys(adcp, endpoint, { account: ACCOUNT, mediaBuyIds: [] });
    expect(pointersOf('get_media_buys', calls[0]!.params)).toEqual(['/media_buy_ids']);
    expect(pointersOf('get_media_buys', lookupArgs({ account: 'acc_1' }))).toContain('/account');
  });
});

describe('list_creatives', () => {
  it('a page of creatives under review (a full page of ids, changed since, from a cursor) is valid', async () => {
    const { adcp, calls } = recordingClient();
    const creativeIds = Array.from({ length: LIST_PAGE_SIZE }, (_, i) => `cr_${i}`);
    await listCreatives(adcp, endpoint, { account: ACCOUNT, creativeIds, updatedAfter: new Date(NOW - 300_000).toISOString() });
    await listCreatives(adcp, endpoint, { creativeIds: ['cr_1'], cursor: 'next-page' });
    expect(calls.map((c) => c.task)).toEqual(['list_creatives', 'list_creatives']);
    for (const c of calls) expect(issuesOf(c.task, c.params)).toEqual([]);
  });

  it('fails the check for more creative ids than a page holds', async () => {
    const { adcp, calls } = recordingClient();
    await listCreatives(adcp, endpoint, { creativeIds: Array.from({ length: LIST_PAGE_SIZE + 1 }, (_, i) => `cr_${i}`) });
    expect(pointersOf('list_creatives', calls[0]!.params)).toEqual(['/filters/creative_ids']);
  });
});

describe('tasks/get and tasks/list', () => {
  it('a poll of one task is valid', () => {
    expect(issuesOf('tasks/get', getTaskArgs('task_8f2c'))).toEqual([]);
  });

  it('reconciliation’s pages of pending tasks are valid (the first, a next one, a page size out of range)', () => {
    const statuses = [...PENDING_TASK_STATUSES] as AdcpTaskStatus[];
    for (const query of [{ statuses, maxResults: 50 }, { statuses, maxResults: 50, cursor: 'c2' }, { statuses, maxResults: 1000 }, {}]) {
      expect(issuesOf('tasks/list', listTasksArgs(query))).toEqual([]);
    }
  });

  it('fails the check for a status AdCP does not have', () => {
    expect(pointersOf('tasks/list', listTasksArgs({ statuses: ['pending' as AdcpTaskStatus] }))).toEqual(['/filters/statuses/0']);
  });
});
