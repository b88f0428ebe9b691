import { describe, expect, it } from 'vitest';
import type { OperationChange } from '../../../src/engine/change-bus.js';
import type { EventFeed } from '../../../src/notify/event-feed.js';
import { OperationWakes } from '../../../src/notify/operation-wakes.js';
import { liveSourceFrom, type LiveChange } from '../../../src/notify/live-source.js';

const change = (tenant: string, id: string, events: number, notifications: number) =>
  ({
    operation: { id, tenant_id: tenant },
    events: Array.from({ length: events }, (_, i) => ({ id: i, kind: 'transition' })),
    notifications: Array.from({ length: notifications }, (_, i) => ({ seq: i + 1, tenant_id: tenant })),
  }) as unknown as OperationChange;

/** A feed that never delivers: only the wake-ups beside it are under test. */
const quietFeed = { subscribe: () => ({ close() {} }), startingPoint: async () => 0 } as unknown as EventFeed;

describe('operation wake-ups for live pages', () => {
  it('wakes for a committed change without a notification, and not for one the feed already carries or one with no event', () => {
    const wakes = new OperationWakes();
    const seen: unknown[] = [];
    wakes.subscribe((w) => seen.push(w));
    wakes.fromLocal(change('t1', 'op1', 1, 0));
    wakes.fromLocal(change('t1', 'op2', 1, 1));
    wakes.fromLocal(change('t1', 'op3', 0, 0));
    expect(seen).toEqual([{ tenantId: 't1', operationIds: ['op1'], many: false }]);
  });

  it('hands a page only its own tenant’s wake-ups, as changes that move no position, until it closes', async () => {
    const wakes = new OperationWakes();
    const live = liveSourceFrom(quietFeed, wakes);
    const got: LiveChange[] = [];
    const sub = live.subscribe('t1', 0, async (c) => void got.push(c), () => undefined);
    wakes.fromLocal(change('t2', 'other-tenant', 1, 0));
    wakes.fromLocal(change('t1', 'op1', 1, 0));
    wakes.emit({ tenantId: 't1', operationIds: [], many: true });
    expect(got).toEqual([
      { cursor: 0, operationIds: ['op1'], other: false, many: false },
      { cursor: 0, operationIds: [], other: false, many: true },
    ]);
    sub.close();
    expect(wakes.size).toBe(0);
    wakes.fromLocal(change('t1', 'op2', 1, 0));
    expect(got).toHaveLength(2);
  });
});
