/**
 * A pause, resume or cancel that ended, applied to its buy (src/engine/media-buys/update-apply.ts),
 * with a fake store that only knows the buy's history: what the reply says, or what the
 * request and the history imply, and the timers that follow.
 */
import { describe, expect, it } from 'vitest';
import { STATUS_AFTER_REPORT_MS } from '../../../src/domain/media-buy-timers.js';
import type { ApplyContext } from '../../../src/engine/media-buys/report-apply.js';
import { planUpdateEnded } from '../../../src/engine/media-buys/update-apply.js';
import type { Store } from '../../../src/store/index.js';
import { newMediaBuyRow } from '../../../src/store/media-buy-row.js';
import type { MediaBuyRow } from '../../../src/store/media-buys-repo.js';
import { newOperationRow } from '../../../src/store/operation-row.js';
import type { OperationRow } from '../../../src/store/operations-repo.js';
import type { Tx } from '../../../src/store/tx.js';

const now = Date.parse('2026-09-01T10:00:00Z');
const trx = {} as Tx;

/** A context whose store answers "the status before it was paused" from `history`. */
function contextWith(history: Record<string, string | null> = {}): ApplyContext {
  const mediaBuys = { statusBeforeIn: async (_t: Tx, _id: string, status: string) => history[status] ?? null };
  return { store: { mediaBuys } as unknown as Store, tracking: { graceMs: 1000, statusIntervalMs: 60_000 }, random: () => 0 };
}

function buyIn(status: string, overrides: Partial<MediaBuyRow> = {}): MediaBuyRow {
  return newMediaBuyRow({ id: 'buy_1', tenant_id: 't', agent_id: 'a', operation_id: 'op_create', media_buy_id: 'mb_1', created_at: now - 60_000 }, { status, ...overrides });
}

function update(request: Record<string, unknown>, result: Record<string, unknown> | null, status = 'completed'): OperationRow {
  return newOperationRow(
    { id: 'op_update', tenant_id: 't', agent_id: 'a', type: 'update_media_buy', idempotency_key: 'k'.repeat(16), request_body: JSON.stringify({ media_buy_id: 'mb_1', ...request }), created_at: now },
    { status, result: result === null ? null : JSON.stringify(result), parent_id: 'op_create' },
  );
}

const statusEvents = (plan: { events?: Array<{ kind: string }> }) => (plan.events ?? []).filter((e) => e.kind === 'status_changed');

describe('an update that completed', () => {
  it('takes the status, revision and actions the reply states, and reads the status soon to confirm it', async () => {
    const plan = await planUpdateEnded(contextWith(), trx, buyIn('active'), update({ paused: true }, { media_buy_id: 'mb_1', status: 'paused', revision: 3, valid_actions: ['resume', 'cancel'] }), now);
    expect(plan.patch).toMatchObject({ status: 'paused', revision: 3, valid_actions: '["resume","cancel"]', status_check_at: now + STATUS_AFTER_REPORT_MS });
    expect(plan.events?.map((e) => e.kind)).toEqual(['update_confirmed', 'status_changed']);
    expect(statusEvents(plan)[0]).toMatchObject({ source: 'call', from: 'active', to: 'paused', detail: { operation_id: 'op_update', stated: true } });
  });

  it('a pause whose reply states no status is paused all the same', async () => {
    const plan = await planUpdateEnded(contextWith(), trx, buyIn('pending_creatives'), update({ paused: true }, { media_buy_id: 'mb_1' }), now);
    expect(plan.patch?.status).toBe('paused');
    expect(statusEvents(plan)[0]).toMatchObject({ from: 'pending_creatives', to: 'paused', detail: { stated: false } });
  });

  it('a resume whose reply states no status goes back to the status before the pause; with no such history it stays as it is', async () => {
    const back = await planUpdateEnded(contextWith({ paused: 'pending_start' }), trx, buyIn('paused'), update({ paused: false }, { media_buy_id: 'mb_1' }), now);
    expect(back.patch?.status).toBe('pending_start');
    const unknown = await planUpdateEnded(contextWith(), trx, buyIn('paused'), update({ paused: false }, { media_buy_id: 'mb_1' }), now);
    expect(unknown.patch?.status).toBeUndefined();
    expect(statusEvents(unknown)).toEqual([]);
  });

  it('a cancel ends the buy: no status read, one last delivery read', async () => {
    const plan = await planUpdateEnded(contextWith(), trx, buyIn('active'), update({ canceled: true }, { media_buy_id: 'mb_1', status: 'canceled' }), now);
    expect(plan.patch).toMatchObject({ status: 'canceled', status_check_at: null, delivery_poll_at: now, next_check_at: now });
  });
});

it('an update that failed changes no status: the status read soon tells what the buy is', async () => {
  const plan = await planUpdateEnded(contextWith(), trx, buyIn('active'), update({ paused: true }, null, 'failed'), now);
  expect(plan.patch).toEqual(expect.objectContaining({ status_check_at: now + STATUS_AFTER_REPORT_MS }));
  expect(plan.patch?.status).toBeUndefined();
  expect(plan.events?.map((e) => e.kind)).toEqual(['update_failed']);
});
