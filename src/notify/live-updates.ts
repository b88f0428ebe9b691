/**
 * Assembles live updates for one process: the SSE feed, fed by this process's
 * ChangeBus with the notifications each committed change wrote and woken (on
 * PostgreSQL) by NOTIFY from other instances, which it then reads from the
 * table, and the NOTIFY sender that tells the other instances about our changes.
 * On SQLite there is one process, so the in-process bus is all it takes.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { ChangeBus } from '../engine/change-bus.js';
import type { DatabaseOutage } from '../engine/database-outage.js';
import type { Store } from '../store/index.js';
import { buyChildWakes } from './buy-child-wakes.js';
import { EventFeed } from './event-feed.js';
import { eventHorizonFor } from './event-horizon.js';
import { OperationWakes } from './operation-wakes.js';
import { PgNotifier } from './pg-notify.js';
import { DEFAULT_SSE_OPTIONS, eventsRoutes } from './sse.js';

const REMOTE_WAKE_GRACE_MS = 500;

export interface LiveUpdatesOptions {
  store: Store;
  bus: ChangeBus;
  databaseUrl: string;
  instanceId: string;
  logger: Logger;
  /** How often SSE streams read the database without a wake-up. */
  fallbackPollMs: number;
  /** How often an idle SSE stream gets a `: heartbeat` comment. */
  heartbeatMs?: number;
  /** Look for due work now (Scheduler.wake). */
  wakeScheduler(): void;
  /** Another instance committed a change (PostgreSQL only): e.g. wake the subscription dispatcher. */
  onRemoteChange?(): void;
  /** The database's absence, for the feed's reads. */
  outage?: DatabaseOutage;
}

export interface LiveUpdates {
  feed: EventFeed;
  /** Changes that raise no notification, from here and (PostgreSQL) other instances: the dashboard's pages re-read on them. */
  wakes: OperationWakes;
  notifier: PgNotifier | undefined;
  /** Registers GET /v1/events. */
  routes(app: FastifyInstance): void;
  start(): Promise<void>;
  /** Ends every SSE stream (so the HTTP server can close) and the LISTEN connection. */
  stop(): Promise<void>;
}

export function createLiveUpdates(opts: LiveUpdatesOptions): LiveUpdates {
  const { store, bus, logger } = opts;
  const feed = new EventFeed(store, eventHorizonFor(store.db, logger), logger, {
    fallbackPollMs: opts.fallbackPollMs,
    pageSize: 500,
    ...(opts.outage ? { outage: opts.outage } : {}),
  });
  const wakes = new OperationWakes();
  const notifier =
    store.db.dialect === 'postgres'
      ? new PgNotifier({
          url: opts.databaseUrl,
          db: store.db,
          instanceId: opts.instanceId,
          log: logger,
          onRemote: (change) => {
            if (change.maxSeq > 0) feed.wake(change.tenantId);
            if (change.operationIds.length > 0 || change.manyOperations) wakes.emit({ tenantId: change.tenantId, operationIds: change.operationIds, many: change.manyOperations });
            if (change.due) wakeSchedulerSoon();
            // A change without a notification gives the subscription dispatcher nothing to send.
            if (change.maxSeq > 0 || change.due) opts.onRemoteChange?.();
          },
          onReconnect: () => {
            feed.wakeAll();
            opts.wakeScheduler();
            opts.onRemoteChange?.();
          },
        })
      : undefined;
  /**
   * New work on another instance is normally claimed by that instance at once (it
   * sends and waits for the first reply inside the API request). Looking only after
   * a short grace keeps us from snatching it and turning a synchronous answer into
   * a bare 202 `requested`; if that instance is too busy or died, we still take it
   * well before our next tick.
   */
  let wakeTimer: NodeJS.Timeout | undefined;
  const wakeSchedulerSoon = () => {
    wakeTimer ??= setTimeout(() => {
      wakeTimer = undefined;
      opts.wakeScheduler();
    }, REMOTE_WAKE_GRACE_MS);
    wakeTimer.unref();
  };
  const wakeBuyOfChild = buyChildWakes({
    buyOf: (operationId) => store.mediaBuys.byOperation(operationId),
    buyOfSync: async (operationId) => {
      const id = await store.creatives.buyOfOperation(operationId);
      return id ? store.mediaBuys.get(id) : undefined;
    },
    wakes,
    ...(notifier ? { tellOthers: (tenantId: string, ids: string[]) => notifier.publishIds(tenantId, ids) } : {}),
  });
  const unsubscribe: Array<() => void> = [];
  return {
    feed,
    wakes,
    notifier,
    routes: eventsRoutes(store, feed, { ...DEFAULT_SSE_OPTIONS, ...(opts.heartbeatMs ? { heartbeatMs: opts.heartbeatMs } : {}) }),
    async start() {
      unsubscribe.push(bus.subscribe((change) => feed.publish(change.notifications)));
      unsubscribe.push(bus.subscribe((change) => wakes.fromLocal(change)));
      // A live buy's changes made here (a report, a status read): their notifications, and a wake for pages showing the buy.
      unsubscribe.push(bus.subscribeBuys((change) => feed.publish(change.notifications)));
      unsubscribe.push(bus.subscribeBuys((change) => wakes.fromBuy(change)));
      // A buy's pause, resume or refresh that ended changed the buy in the operation's commit: told by the buy's id too.
      unsubscribe.push(bus.subscribe((change) => void wakeBuyOfChild(change)));
      if (notifier) {
        unsubscribe.push(bus.subscribe((change) => notifier.publish(change)));
        unsubscribe.push(bus.subscribeBuys((change) => notifier.publishBuy(change)));
        await notifier.start();
      }
      // The first look of the PostgreSQL horizon waits for transactions then in flight: start it now, not on the first stream.
      await feed.startingPoint().catch((err) => logger.warn({ err }, 'event feed: first look at the notifications failed'));
      feed.start();
    },
    async stop() {
      for (const u of unsubscribe.splice(0)) u();
      clearTimeout(wakeTimer);
      feed.stop();
      await notifier?.stop();
    },
  };
}
