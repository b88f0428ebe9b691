/**
 * What live readers (the dashboard's pages, the MCP server's waits and resource
 * subscriptions) learn: which operations and live media buys of the tenant changed,
 * and a position to resume from. It rides on the notifications feed behind
 * GET /v1/events (src/notify/event-feed.ts, docs/ARCHITECTURE.md, Telling users), so a reader hears of
 * every change that raises a notification, from whichever instance, in order, and
 * a lost wake-up only delays it. Changes that raise none (`working`, `calling_adcp`,
 * a governance step) come as wake-ups beside it (src/notify/operation-wakes.ts):
 * they move no position, and one lost (a reconnect in between) waits for the page's
 * periodic refresh.
 */
import type { EventFeed } from './event-feed.js';
import type { OperationWakes } from './operation-wakes.js';

export interface LiveChange {
  /** Where a stream resumes after this change (a notification seq); 0 for a wake-up, which moves no position. */
  cursor: number;
  /**
   * The ids of what changed: operations, and live media buys by their own id (`buy_…`,
   * the subject of their notifications and wake-ups, which also name the buy's create
   * operation so that its page re-reads).
   */
  operationIds: string[];
  /** A notification about no single operation (a campaign's) was among them. */
  other: boolean;
  /** More operations changed than are named: every page re-reads. */
  many?: boolean;
}

export interface LiveSource {
  /** The position a page rendered now is up to date with: its stream starts after it. */
  position(tenantId: string): Promise<number>;
  /** Hands over changes after `after`; the next waits until `deliver` resolves. */
  subscribe(tenantId: string, after: number, deliver: (change: LiveChange) => Promise<void>, end: () => void): { close(): void };
}

export function liveSourceFrom(feed: EventFeed, wakes?: OperationWakes): LiveSource {
  return {
    // The feed's own starting point: below it nothing can still appear (see event-horizon.ts).
    position: () => feed.startingPoint(),
    subscribe(tenantId, after, deliver, end) {
      const subscription = feed.subscribe(tenantId, after, {
        deliver: (rows) => {
          const ids = new Set<string>();
          let other = false;
          for (const r of rows) {
            if (r.operation_id) ids.add(r.operation_id);
            else other = true;
          }
          return deliver({ cursor: rows[rows.length - 1]!.seq, operationIds: [...ids], other });
        },
        end,
      });
      const unsubscribe = wakes?.subscribe((wake) => {
        if (wake.tenantId !== tenantId) return;
        void deliver({ cursor: 0, operationIds: wake.operationIds, other: false, many: wake.many }).catch(() => undefined);
      });
      return {
        close() {
          unsubscribe?.();
          subscription.close();
        },
      };
    },
  };
}
