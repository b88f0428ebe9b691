/** A buy's child operation that ends wakes live readers of the buy by the buy's id, here and (told) elsewhere. */
import { describe, expect, it } from 'vitest';
import type { OperationChange } from '../../../src/engine/change-bus.js';
import { buyChildWakes } from '../../../src/notify/buy-child-wakes.js';
import { OperationWakes, type OperationWake } from '../../../src/notify/operation-wakes.js';

const change = (type: string, parentId: string | null, toStatus: string | null) =>
  ({
    operation: { id: `op-${type}`, tenant_id: 't1', type, parent_id: parentId },
    events: [{ id: 1, kind: 'transition', to_status: toStatus }],
    notifications: [],
  }) as unknown as OperationChange;

describe('wake-ups for a buy changed by its child operations', () => {
  it('names the buy when a pause, resume or refresh of it ends; not before, and not for other operations', async () => {
    const wakes = new OperationWakes();
    const seen: OperationWake[] = [];
    wakes.subscribe((w) => seen.push(w));
    const told: Array<[string, string[]]> = [];
    const asked: string[] = [];
    const wake = buyChildWakes({
      buyOf: async (id) => {
        asked.push(id);
        return id === 'create-1' ? { id: 'buy_1', tenant_id: 't1' } : undefined;
      },
      wakes,
      tellOthers: (tenant, ids) => told.push([tenant, ids]),
    });
    await wake(change('update_media_buy', 'create-1', 'completed'));
    await wake(change('get_media_buy_delivery', 'create-1', 'failed'));
    await wake(change('update_media_buy', 'create-1', 'working'));
    await wake(change('update_media_buy', null, 'completed'));
    await wake(change('create_media_buy', 'cmp_1', 'completed'));
    await wake(change('get_media_buys', 'create-of-nothing', 'completed'));
    expect(asked).toEqual(['create-1', 'create-1', 'create-of-nothing']);
    expect(seen).toEqual([
      { tenantId: 't1', operationIds: ['buy_1'], many: false },
      { tenantId: 't1', operationIds: ['buy_1'], many: false },
    ]);
    expect(told).toEqual([
      ['t1', ['buy_1']],
      ['t1', ['buy_1']],
    ]);
  });

  it("names the buy whose creatives a sync_creatives sent, ended or had answered; not for its other changes", async () => {
    const wakes = new OperationWakes();
    const seen: OperationWake[] = [];
    wakes.subscribe((w) => seen.push(w));
    const asked: string[] = [];
    const wake = buyChildWakes({
      buyOf: async () => undefined,
      buyOfSync: async (id) => {
        asked.push(id);
        return { id: 'buy_9', tenant_id: 't1' };
      },
      wakes,
    });
    const sync = (kind: string, parentId: string | null = 'create-9') =>
      ({ operation: { id: 'op-sync', tenant_id: 't1', type: 'sync_creatives', parent_id: parentId }, events: [{ id: 1, kind, to_status: null }], notifications: [] }) as unknown as OperationChange;
    await wake(sync('created'));
    await wake(sync('answered'));
    await wake(sync('poll_failed'));
    await wake(sync('created', null));
    expect(asked).toEqual(['op-sync', 'op-sync']);
    expect(seen).toEqual([
      { tenantId: 't1', operationIds: ['buy_9'], many: false },
      { tenantId: 't1', operationIds: ['buy_9'], many: false },
    ]);
  });

  it('a failed read wakes nobody and throws nothing', async () => {
    const wakes = new OperationWakes();
    const seen: OperationWake[] = [];
    wakes.subscribe((w) => seen.push(w));
    const wake = buyChildWakes({ buyOf: async () => Promise.reject(new Error('database away')), wakes });
    await expect(wake(change('update_media_buy', 'create-1', 'completed'))).resolves.toBeUndefined();
    expect(seen).toEqual([]);
  });
});
