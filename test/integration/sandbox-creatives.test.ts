/**
 * The sandbox seller's creatives over real MCP (through the project's own AdCP
 * client): sync_creatives (created, updated, unchanged, a failed item, assignments
 * and their errors, idempotent replays), the review desk by name, list_creatives'
 * filters and pages, creative_approvals in get_media_buys, and a buy awaiting
 * creatives that starts once they are approved.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandboxSeller, SANDBOX_REJECTION_REASON, type SandboxSeller, type SandboxSellerOptions } from '../../src/sandbox/seller.js';
import { displayCreative } from '../helpers/creatives.js';
import { caller, type Caller } from '../helpers/governance.js';
import { eventually } from '../helpers/orchestrator.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function seller(opts: SandboxSellerOptions = {}): Promise<{ s: SandboxSeller; adcp: Caller }> {
  const s = await startSandboxSeller({ reportClock: false, statusStepMs: 0, ...opts });
  cleanups.push(() => s.close());
  return { s, adcp: caller({ url: s.url, protocol: 'mcp' }) };
}

const account = { account_id: 'acc_cr' };
async function buy(adcp: Caller, product: string): Promise<{ id: string; packageId: string }> {
  const reply = await adcp.call('create_media_buy', {
    idempotency_key: randomUUID(),
    account,
    brand: { domain: 'brand.example' },
    start_time: 'asap',
    end_time: new Date(Date.now() + 4 * 3_600_000).toISOString(),
    packages: [{ product_id: product, pricing_option_id: 'cpm_usd_fixed', budget: 1000 }],
  });
  expect(reply.error).toBeUndefined();
  return { id: reply.data.media_buy_id as string, packageId: (reply.data.packages as Array<{ package_id: string }>)[0]!.package_id };
}
const sync = (adcp: Caller, creatives: unknown[], extra: Record<string, unknown> = {}) => adcp.call('sync_creatives', { idempotency_key: randomUUID(), account, creatives, ...extra });
const approvals = async (adcp: Caller, mediaBuyId: string) => {
  const reply = await adcp.call('get_media_buys', { account, media_buy_ids: [mediaBuyId] });
  return ((reply.data.media_buys as any[])[0].packages[0].creative_approvals ?? []) as Array<Record<string, unknown>>;
};

describe('sandbox seller: creatives', () => {
  it('syncs, reviews by name, shows approvals on the buy, and starts a buy awaiting creatives once they are approved', async () => {
    // Long enough to read the pending approvals before the review (a name decides it when it comes).
    const { s, adcp } = await seller({ creativeReviewMs: 1_500 });
    const b = await buy(adcp, 'sandbox_awaiting_creatives');
    const first = await sync(adcp, [displayCreative('ok', 'Banner', s.url), displayCreative('no', 'Banner REJECT', s.url)], {
      assignments: [
        { creative_id: 'ok', package_id: b.packageId },
        { creative_id: 'no', package_id: b.packageId },
        { creative_id: 'ok', package_id: 'pkg_nowhere' },
      ],
    });
    expect(first.status).toBe('completed');
    expect(first.data.creatives).toEqual([
      { creative_id: 'ok', action: 'created', status: 'pending_review', assigned_to: [b.packageId], assignment_errors: { pkg_nowhere: "no package pkg_nowhere in this account's media buys" } },
      { creative_id: 'no', action: 'created', status: 'pending_review', assigned_to: [b.packageId] },
    ]);
    expect(await approvals(adcp, b.id)).toEqual([
      { creative_id: 'ok', approval_status: 'pending_review' },
      { creative_id: 'no', approval_status: 'pending_review' },
    ]);
    await eventually(async () => (s.creatives.list('acc_cr').every((c) => c.status !== 'pending_review') ? true : undefined));
    expect(await approvals(adcp, b.id)).toEqual([
      { creative_id: 'ok', approval_status: 'approved' },
      { creative_id: 'no', approval_status: 'rejected', rejection_reason: SANDBOX_REJECTION_REASON },
    ]);
    // Every package has an approved creative: the buy starts.
    expect(s.reporting.buy(b.id)!.status).toBe('pending_start');

    // The same again is unchanged; a corrected one is updated and reviewed again.
    const again = await sync(adcp, [displayCreative('ok', 'Banner', s.url), displayCreative('no', 'Banner, fixed', s.url)]);
    expect((again.data.creatives as any[]).map((c) => c.action)).toEqual(['unchanged', 'updated']);
    await eventually(async () => (s.creatives.list('acc_cr').find((c) => c.creative_id === 'no')!.status === 'approved' ? true : undefined));
    expect(s.creatives.list('acc_cr').find((c) => c.creative_id === 'no')!.reviews).toBe(2);
  });

  it('refuses a whole sync with one creative off the schema, as an SDK-built seller does, keeping none; replays a key', async () => {
    const { s, adcp } = await seller({ creativeReviewMs: 60_000 });
    const { assets: _a, ...noAssets } = displayCreative('bad', 'No assets', s.url);
    const mixed = await sync(adcp, [displayCreative('good', 'Fine', s.url), noAssets]);
    expect(mixed.error).toMatchObject({ code: 'VALIDATION_ERROR', field: '/creatives/1/assets' });
    expect((await adcp.call('list_creatives', { account })).data.creatives).toEqual([]);
    // Valid for the schema but in a format this seller does not offer: that item fails, the others go through.
    const billboard = { ...displayCreative('wide', 'Billboard', s.url), format_id: { agent_url: s.url, id: 'billboard_970x250' } };
    const perItem = await sync(adcp, [displayCreative('good', 'Fine', s.url), billboard]);
    expect(perItem.data.creatives).toEqual([
      { creative_id: 'good', action: 'created', status: 'pending_review' },
      { creative_id: 'wide', action: 'failed', errors: [expect.objectContaining({ code: 'CREATIVE_REJECTED', field: 'creatives[1].format_id', message: expect.stringContaining('billboard_970x250') })] },
    ]);
    const refused = await adcp.call('sync_creatives', { idempotency_key: randomUUID(), account, creatives: [displayCreative('x', 'X', s.url)], validation_mode: 'sloppy' });
    expect(refused.error).toMatchObject({ code: 'VALIDATION_ERROR', field: '/validation_mode' });
    const key = randomUUID();
    const once = await adcp.call('sync_creatives', { idempotency_key: key, account, creatives: [displayCreative('r', 'R', s.url)] });
    const twice = await adcp.call('sync_creatives', { idempotency_key: key, account, creatives: [displayCreative('r', 'R', s.url)] });
    expect(twice.data.replayed).toBe(true);
    expect(twice.data.creatives).toEqual(once.data.creatives);
    const conflict = await adcp.call('sync_creatives', { idempotency_key: key, account, creatives: [displayCreative('r', 'Other', s.url)] });
    expect(conflict.error?.code).toBe('IDEMPOTENCY_CONFLICT');
  });

  it('list_creatives filters by ids, statuses, update time and name, and pages', async () => {
    const { s, adcp } = await seller({ creativeReviewMs: 60_000 });
    await sync(adcp, ['a', 'b', 'c'].map((id) => displayCreative(id, `Creative ${id}`, s.url)));
    s.creatives.review('b', 'rejected', { accountId: 'acc_cr', reason: 'too loud' });
    const list = (filters: Record<string, unknown>, pagination?: Record<string, unknown>) => adcp.call('list_creatives', { account, filters, ...(pagination ? { pagination } : {}) });
    expect(((await list({ creative_ids: ['a', 'c'] })).data.creatives as any[]).map((c) => c.creative_id)).toEqual(['a', 'c']);
    expect(((await list({ statuses: ['rejected'] })).data.creatives as any[]).map((c) => [c.creative_id, c.status])).toEqual([['b', 'rejected']]);
    expect(((await list({ name_contains: 'CREATIVE C' })).data.creatives as any[]).map((c) => c.creative_id)).toEqual(['c']);
    expect((await list({ updated_after: new Date(Date.now() + 60_000).toISOString() })).data.creatives).toEqual([]);
    const page1 = await list({}, { max_results: 2 });
    expect(page1.data.pagination).toMatchObject({ has_more: true, cursor: '2', total_count: 3 });
    const page2 = await list({}, { max_results: 2, cursor: '2' });
    expect((page2.data.creatives as any[]).map((c) => c.creative_id)).toEqual(['c']);
    expect((await adcp.call('list_creatives', { account, filters: { statuses: ['nope'] } })).error).toMatchObject({ code: 'VALIDATION_ERROR', field: '/filters/statuses/0' });
    // Another account sees none of them.
    expect((await adcp.call('list_creatives', { account: { account_id: 'acc_other' } })).data.creatives).toEqual([]);
  });
});
