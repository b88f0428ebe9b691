/**
 * What the dashboard's pages learn live: which operations of the tenant changed,
 * and a cursor to resume from. It rides on the same feed as GET /v1/events
 * (src/notify/event-feed.ts), so a page sees every change, from whichever
 * instance, in order, and a lost wake-up only delays it.
 */
import type { EventFeed } from '../notify/event-feed.js';
import type { Store } from '../store/index.js';

export interface LiveChange {
  /** Where a stream resumes after this change (the feed's position). */
  cursor: number;
  operationIds: string[];
}

export interface LiveSource {
  /** The position a page rendered now is up to date with: its stream starts after it. */
  position(tenantId: string): Promise<number>;
  /** Hands over changes after `after`; the next waits until `deliver` resolves. */
  subscribe(tenantId: string, after: number, deliver: (change: LiveChange) => Promise<void>, end: () => void): { close(): void };
}

export function liveSourceFrom(feed: EventFeed, store: Store): LiveSource {
  return {
    async position(tenantId) {
      const row = await store.db.kysely
        .selectFrom('operation_events')
        .select((eb) => eb.fn.max('id').as('max'))
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst();
      return Number(row?.max ?? 0);
    },
    subscribe(tenantId, after, deliver, end) {
      return feed.subscribe(tenantId, after, {
        deliver: (events) =>
          deliver({ cursor: events[events.length - 1]!.row.id, operationIds: [...new Set(events.map((e) => e.row.operation_id))] }),
        end,
      });
    },
  };
}
