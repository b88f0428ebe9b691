/**
 * The buy a completed create makes takes its status from what the reply says of the
 * buy: `media_buy_status` first (3.1+), a 3.0 root buy status otherwise; the task's
 * `completed` never makes a buy completed.
 */
import { describe, expect, it } from 'vitest';
import { buyFromOperation } from '../../../src/engine/media-buys/buy-recorder.js';
import { newOperationRow } from '../../../src/store/operation-row.js';

const NOW = Date.parse('2026-12-08T00:00:00Z');
const tracking = { statusIntervalMs: 900_000, graceMs: 7_200_000, minElapsed: 0.1 } as never;

function createOp(): ReturnType<typeof newOperationRow> {
  const request = {
    account: { account_id: 'acc' },
    brand: { domain: 'brand.example' },
    start_time: 'asap',
    end_time: '2027-01-31T00:00:00Z',
    packages: [{ product_id: 'p1', pricing_option_id: 'cpm', budget: 1000 }],
  };
  return newOperationRow({ id: 'op1', tenant_id: 't', agent_id: 'a', type: 'create_media_buy', idempotency_key: 'k'.repeat(20), request_body: JSON.stringify(request), created_at: NOW }, { status: 'completed' });
}

const made = (result: Record<string, unknown>) => buyFromOperation(createOp(), { media_buy_id: 'mb_1', ...result }, 'mb_1', tracking, NOW, () => 0.5);

describe('a buy made from a completed create', () => {
  it('takes a 3.1 reply’s media_buy_status, not the task’s completed, and reads the status on its interval', () => {
    const { row, events } = made({ status: 'completed', media_buy_status: 'pending_creatives' });
    expect(row.status).toBe('pending_creatives');
    expect(events.find((e) => e.kind === 'status_changed')).toMatchObject({ to: 'pending_creatives' });
    expect(row.status_check_at).toBeGreaterThan(NOW);
  });

  it('takes a 3.0 reply’s root buy status', () => {
    expect(made({ status: 'active' }).row.status).toBe('active');
  });

  it('never makes a buy completed from a task’s completed; its status is read at once instead', () => {
    const { row } = made({ status: 'completed' });
    expect(row.status).toBe('pending_start');
    expect(row.status_check_at).toBe(NOW);
  });
});
