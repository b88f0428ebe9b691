/**
 * The sandbox seller's tasks on live buys, over MCP and A2A through the
 * project's own AdCP client: get_media_buy_delivery (status filter, date
 * ranges, not-found errors), get_media_buys (revision, valid actions,
 * history, snapshots, cancellation) and update_media_buy pause/resume. Every
 * success reply is checked against the AdCP 3.0 schemas, and the seller's
 * stats show each call with its arguments.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { sdkValidator } from '../../src/sandbox/sdk-validator.js';
import { caller, type Caller } from '../helpers/governance.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const ACCOUNT = { account_id: 'acc_tasks' };
const DAY = 86_400_000;
let seq = 0;
const key = (what: string): string => `${what}-${Date.now()}-${++seq}-abcdef`;

async function setUp(): Promise<{ s: SandboxSeller; mcp: Caller; a2a: Caller }> {
  const s = await startSandboxSeller({ reportClock: false, flightPeriods: 4 });
  cleanups.push(() => s.close());
  return { s, mcp: caller({ url: s.url, protocol: 'mcp' }), a2a: caller({ url: s.a2aUrl!, protocol: 'a2a' }) };
}

/** A buy over four days from 2030-01-01 (daily: four one-day periods). */
async function buy(adcp: Caller, product = 'sandbox_instant', account: Record<string, unknown> = ACCOUNT, budget = 4000): Promise<string> {
  const reply = await adcp.call('create_media_buy', {
    idempotency_key: key('buy'),
    account,
    brand: { domain: 'brand.example' },
    start_time: '2030-01-01T00:00:00Z',
    end_time: '2030-01-05T00:00:00Z',
    packages: [{ product_id: product, pricing_option_id: 'cpm_usd_fixed', budget }],
  });
  expect(reply.error).toBeUndefined();
  return reply.data.media_buy_id as string;
}

function schemaValid(tool: string, body: Record<string, unknown>): void {
  expect(sdkValidator.validateResponse(tool, body).issues).toEqual([]);
}

describe('sandbox seller: get_media_buy_delivery', () => {
  it('answers active buys by default, the statuses asked for otherwise, lifetime or by date range', async () => {
    const { s, mcp } = await setUp();
    const live = await buy(mcp);
    const pending = await buy(mcp);
    await s.reporting.fireNow(live);
    await s.reporting.fireNow(live);

    const byDefault = await mcp.call('get_media_buy_delivery', { account: ACCOUNT });
    schemaValid('get_media_buy_delivery', byDefault.data);
    expect((byDefault.data.media_buy_deliveries as any[]).map((d) => d.media_buy_id)).toEqual([live]);
    const delivered = s.reporting.buy(live)!.delivered;
    const spend = Math.round(delivered.reduce((n, d) => n + d.packages[0]!.spend, 0) * 100) / 100;
    expect(byDefault.data).toMatchObject({
      reporting_period: { start: '2030-01-01T00:00:00.000Z', end: '2030-01-03T00:00:00.000Z' },
      currency: 'USD',
      aggregated_totals: { spend, media_buy_count: 1, impressions: Math.round(spend * 100) },
    });
    const row = (byDefault.data.media_buy_deliveries as any[])[0];
    expect(row.by_package[0]).toMatchObject({ spend, pricing_model: 'cpm', rate: 10, currency: 'USD', delivery_status: 'delivering', paused: false });
    expect(row.by_package[0].pacing_index).toBeGreaterThan(0.9);

    const both = await mcp.call('get_media_buy_delivery', { account: ACCOUNT, status_filter: ['active', 'pending_creatives'] });
    expect((both.data.media_buy_deliveries as any[]).map((d) => [d.media_buy_id, d.status, d.totals.spend])).toEqual([
      [live, 'active', spend],
      [pending, 'pending_creatives', 0],
    ]);

    const dayTwo = await mcp.call('get_media_buy_delivery', { account: ACCOUNT, media_buy_ids: [live], start_date: '2030-01-02', end_date: '2030-01-02' });
    schemaValid('get_media_buy_delivery', dayTwo.data);
    expect(dayTwo.data.reporting_period).toEqual({ start: '2030-01-02T00:00:00.000Z', end: '2030-01-03T00:00:00.000Z' });
    expect((dayTwo.data.media_buy_deliveries as any[])[0].totals.spend).toBe(delivered[1]!.packages[0]!.spend);
    const later = await mcp.call('get_media_buy_delivery', { account: ACCOUNT, start_date: '2030-01-03', end_date: '2030-01-04' });
    expect((later.data.media_buy_deliveries as any[])[0].totals.spend).toBe(0);
  });

  it('MEDIA_BUY_NOT_FOUND for unknown ids or another account’s; partial answers name the missing ones; bad input is refused', async () => {
    const { mcp } = await setUp();
    const mine = await buy(mcp);
    const theirs = await buy(mcp, 'sandbox_instant', { account_id: 'acc_someone_else' });
    const unknown = await mcp.call('get_media_buy_delivery', { account: ACCOUNT, media_buy_ids: ['mb_nope', theirs] });
    expect(unknown.error).toMatchObject({ code: 'MEDIA_BUY_NOT_FOUND' });

    const partial = await mcp.call('get_media_buy_delivery', { account: ACCOUNT, media_buy_ids: [mine, 'mb_nope'], status_filter: 'pending_creatives' });
    // A partial success: the rows that exist, and errors[] for the rest (the project's client surfaces those as `error`).
    expect(partial.error).toMatchObject({ code: 'MEDIA_BUY_NOT_FOUND' });
    schemaValid('get_media_buy_delivery', partial.data);
    expect((partial.data.media_buy_deliveries as any[]).map((d) => d.media_buy_id)).toEqual([mine]);
    expect(partial.data.errors).toEqual([expect.objectContaining({ code: 'MEDIA_BUY_NOT_FOUND', field: 'media_buy_ids[1]' })]);

    const none = await mcp.call('get_media_buy_delivery', { account: ACCOUNT, status_filter: ['completed'] });
    expect(none.data.media_buy_deliveries).toEqual([]);
    // Off the schema: refused by the schema check, naming the pointer; valid for the schema but
    // meaningless (one date, dates backwards): refused by the seller's own rules.
    for (const [args, code, field] of [
      [{ start_date: '2030-01-01' }, 'INVALID_REQUEST', 'end_date'],
      [{ start_date: '2030-01-02', end_date: '2030-01-01' }, 'INVALID_REQUEST', 'end_date'],
      [{ start_date: '01/02/2030', end_date: '2030-01-03' }, 'VALIDATION_ERROR', '/start_date'],
      [{ status_filter: ['sleeping'] }, 'VALIDATION_ERROR', '/status_filter'],
      [{ media_buy_ids: [] }, 'VALIDATION_ERROR', '/media_buy_ids'],
    ] as const) {
      const bad = await mcp.call('get_media_buy_delivery', { account: ACCOUNT, ...args });
      expect(bad.error, JSON.stringify(args)).toMatchObject({ code, field });
    }
  });

  it('over A2A as well', async () => {
    const { s, mcp, a2a } = await setUp();
    const id = await buy(mcp);
    await s.reporting.fireNow(id);
    const reply = await a2a.call('get_media_buy_delivery', { account: ACCOUNT, media_buy_ids: [id] });
    expect(reply.error).toBeUndefined();
    expect((reply.data.media_buy_deliveries as any[])[0]).toMatchObject({ media_buy_id: id, status: 'active' });
    expect(s.stats().calls.filter((c) => c.tool === 'get_media_buy_delivery').map((c) => c.args)).toEqual([{ account: ACCOUNT, media_buy_ids: [id] }]);
  });
});

describe('sandbox seller: get_media_buys', () => {
  it('status, revision, valid actions, packages with snapshots, history newest first', async () => {
    const { s, mcp } = await setUp();
    const id = await buy(mcp, 'sandbox_underpacing');
    const fresh = await mcp.call('get_media_buys', { account: ACCOUNT, media_buy_ids: [id], include_snapshot: true });
    schemaValid('get_media_buys', fresh.data);
    expect((fresh.data.media_buys as any[])[0]).toMatchObject({
      media_buy_id: id,
      account: { account_id: 'acc_tasks', status: 'active' },
      status: 'pending_creatives',
      revision: 1,
      currency: 'USD',
      total_budget: 4000,
      start_time: '2030-01-01T00:00:00Z',
      end_time: '2030-01-05T00:00:00Z',
      valid_actions: expect.arrayContaining(['cancel']),
    });
    await s.reporting.fireNow(id);
    const read = await mcp.call('get_media_buys', { account: ACCOUNT, media_buy_ids: [id], include_snapshot: true, include_history: 2 });
    schemaValid('get_media_buys', read.data);
    const mb = (read.data.media_buys as any[])[0];
    expect(mb).toMatchObject({ status: 'active', revision: 3, valid_actions: expect.arrayContaining(['pause', 'cancel']) });
    expect(mb.history.map((h: any) => [h.revision, h.action])).toEqual([[3, 'activated'], [2, 'creatives_approved']]);
    const spent = s.reporting.buy(id)!.delivered[0]!.packages[0]!;
    expect(mb.packages[0]).toMatchObject({ product_id: 'sandbox_underpacing', budget: 4000, paused: false, snapshot: { spend: spent.spend, impressions: spent.impressions, delivery_status: 'delivering' } });
    expect(mb.packages[0].snapshot.pacing_index).toBeLessThan(0.5);
    expect((await mcp.call('get_media_buys', { account: ACCOUNT, status_filter: 'completed' })).data.media_buys).toEqual([]);
    // Without ids the sandbox applies no implicit status filter (a natural-key lookup finds pending buys).
    const other = await buy(mcp);
    expect(((await mcp.call('get_media_buys', { account: ACCOUNT })).data.media_buys as any[]).map((b) => b.media_buy_id)).toEqual([id, other]);
  });
});

describe('sandbox seller: update_media_buy pause and resume', () => {
  const update = (adcp: Caller, mediaBuyId: string, fields: Record<string, unknown>, idempotencyKey = key('update')) =>
    adcp.call('update_media_buy', { idempotency_key: idempotencyKey, account: ACCOUNT, media_buy_id: mediaBuyId, ...fields });

  it('pause stops spend (reports go on), resume continues; each bumps the revision once; replays and no-ops change nothing', async () => {
    const { s, mcp } = await setUp();
    const id = await buy(mcp);
    expect((await update(mcp, id, { paused: true })).error).toMatchObject({ code: 'INVALID_STATE', field: 'paused' });
    await s.reporting.fireNow(id);
    const pauseKey = key('pause');
    const paused = await update(mcp, id, { paused: true }, pauseKey);
    expect(paused.error).toBeUndefined();
    schemaValid('update_media_buy', paused.data);
    expect(paused.data).toMatchObject({ media_buy_id: id, status: 'paused', revision: 4, valid_actions: expect.arrayContaining(['resume']) });
    expect(await update(mcp, id, { paused: true }, pauseKey)).toMatchObject({ replayed: true, data: { revision: 4 } });
    expect((await update(mcp, id, { paused: true })).data).toMatchObject({ status: 'paused', revision: 4 });

    await s.reporting.fireNow(id);
    expect(s.reporting.buy(id)!.delivered[1]!.packages[0]!.spend).toBe(0);
    const whilePaused = await mcp.call('get_media_buy_delivery', { account: ACCOUNT, media_buy_ids: [id], status_filter: ['paused'] });
    expect((whilePaused.data.media_buy_deliveries as any[])[0]).toMatchObject({ status: 'paused', by_package: [expect.objectContaining({ paused: true })] });

    expect((await update(mcp, id, { paused: false, revision: 3 })).error).toMatchObject({ code: 'CONFLICT', field: 'revision' });
    const resumed = await update(mcp, id, { paused: false, revision: 4 });
    expect(resumed.data).toMatchObject({ status: 'active', revision: 5 });
    await s.reporting.fireNow(id);
    expect(s.reporting.buy(id)!.delivered[2]!.packages[0]!.spend).toBeGreaterThan(900);
    expect(s.reporting.buy(id)!.history.slice(-2).map((h) => [h.action, h.actor])).toEqual([['paused', 'buyer'], ['resumed', 'buyer']]);

    await s.reporting.runToEnd(id);
    expect((await update(mcp, id, { paused: true })).error).toMatchObject({ code: 'INVALID_STATE' });
    expect((await update(mcp, id, { canceled: true })).error).toMatchObject({ code: 'NOT_CANCELLABLE' });
    const updates = s.stats().calls.filter((c) => c.tool === 'update_media_buy');
    expect(updates[1]!.args).toMatchObject({ idempotency_key: pauseKey, media_buy_id: id, paused: true });
  });

  it('pauses a package; refuses unknown packages, unknown buys and what the sandbox cannot do', async () => {
    const { s, mcp, a2a } = await setUp();
    const id = await buy(mcp);
    await s.reporting.fireNow(id);
    const pkg = s.reporting.buy(id)!.packages[0]!.package_id;
    const paused = await a2a.call('update_media_buy', { idempotency_key: key('pkg'), account: ACCOUNT, media_buy_id: id, packages: [{ package_id: pkg, paused: true }] });
    expect(paused.error).toBeUndefined();
    expect(paused.data).toMatchObject({ status: 'active', affected_packages: [{ package_id: pkg, paused: true }] });
    await s.reporting.fireNow(id);
    expect(s.reporting.buy(id)!.delivered[1]!.packages[0]!.spend).toBe(0);

    expect((await update(mcp, id, { packages: [{ package_id: 'pkg_nope', paused: true }] })).error).toMatchObject({ code: 'PACKAGE_NOT_FOUND' });
    expect((await update(mcp, 'mb_nope', { paused: true })).error).toMatchObject({ code: 'MEDIA_BUY_NOT_FOUND' });
    expect((await update(mcp, id, { end_time: '2030-02-01T00:00:00Z' })).error).toMatchObject({ code: 'UNSUPPORTED_FEATURE' });
    expect((await update(mcp, id, {})).error).toMatchObject({ code: 'INVALID_REQUEST' });
    expect((await update(mcp, id, { canceled: true, paused: true })).error).toMatchObject({ code: 'INVALID_REQUEST' });
    expect(s.reporting.buy(id)!.status).toBe('active');
  });
});
