/**
 * `--wait` for the commands that start operations on a live buy (pause, resume,
 * refresh): follow the tenant's event stream until every operation started has
 * ended and, when they all completed, the buy shows what they were for (paused,
 * active again, freshly read). The stream is opened before the state is read, as
 * `ops watch` does, so an end that comes in between is not missed; after a drop
 * that cannot be resumed the state is read again. Bounded by a timeout: a seller
 * that never answers must not hang a script.
 */
import { callApi, type ApiTarget } from './api-client.js';
import { followEvents } from './event-stream.js';
import type { OperationView } from './operation-view.js';
import type { MediaBuyJson } from '../domain/media-buy-json.js';

const TERMINAL = new Set(['completed', 'failed', 'canceled', 'rejected']);

export interface WaitTarget {
  operationIds: string[];
  buyId: string;
  /** When every operation completed: the buy is as asked once this holds (default: at once). */
  buyReady?: (buy: MediaBuyJson) => boolean;
}

export interface WaitResult {
  operations: OperationView[];
  buy: MediaBuyJson;
  /** Every operation completed (and the buy got where it was asked to). */
  ok: boolean;
}

/** The wait ran out: said as one line on standard error (exit 1), like every failure of a command. */
export class WaitTimeout extends Error {}

export async function waitForBuyOperations(api: ApiTarget, t: WaitTarget, timeoutMs: number): Promise<WaitResult> {
  const ops = new Map<string, OperationView>();
  let buy: MediaBuyJson | undefined;
  const ready = t.buyReady ?? (() => true);
  const settled = (): boolean => {
    if (ops.size < t.operationIds.length || [...ops.values()].some((o) => !TERMINAL.has(o.status))) return false;
    if ([...ops.values()].some((o) => o.status !== 'completed')) return true;
    return buy !== undefined && ready(buy);
  };
  const readAll = async () => {
    for (const id of t.operationIds) ops.set(id, await callApi<OperationView>(api, 'GET', `/v1/operations/${encodeURIComponent(id)}`));
    buy = await callApi<MediaBuyJson>(api, 'GET', `/v1/media-buys/${encodeURIComponent(t.buyId)}`);
  };

  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new WaitTimeout(`still waiting after ${Math.round(timeoutMs / 1000)} s: ${describe(ops, t.operationIds)}`)), timeoutMs);
    timer.unref();
  });
  try {
    await Promise.race([
      timedOut,
      followEvents(api, {
        onOpen: async ({ resumed }) => {
          if (resumed) return;
          await readAll();
          return settled() ? 'stop' : undefined;
        },
        onNotification: async (n) => {
          const op = n.data.operation;
          if (op && ops.has(op.id)) ops.set(op.id, { ...ops.get(op.id)!, ...(op as unknown as OperationView) });
          const changed = n.data.media_buy as MediaBuyJson | undefined;
          if (changed?.id === t.buyId) buy = changed;
          // An operation's end may change the buy in its own commit without a buy notification: read it then.
          if (op && ops.has(op.id) && TERMINAL.has(op.status)) buy = await callApi<MediaBuyJson>(api, 'GET', `/v1/media-buys/${encodeURIComponent(t.buyId)}`);
          return settled() ? 'stop' : undefined;
        },
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
  const operations = t.operationIds.map((id) => ops.get(id)!);
  return { operations, buy: buy!, ok: operations.every((o) => o.status === 'completed') && ready(buy!) };
}

function describe(ops: Map<string, OperationView>, ids: string[]): string {
  return ids.map((id) => `${id} ${ops.get(id)?.status ?? 'unread'}`).join(', ');
}
