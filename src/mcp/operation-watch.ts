/**
 * Waiting for an operation to change, for the MCP tools (wait_for_operation, a start
 * tool called without a task). It listens on the tenant's live changes (the
 * notifications feed and the wake-ups beside it, src/notify/live-source.ts), which
 * carry changes from every instance, and re-reads the row only when a change names it:
 * no polling loop, and a change committed on another instance ends the wait as well.
 */
import type { LiveSource } from '../notify/live-source.js';
import type { OperationRow, Store } from '../store/index.js';

/** Whether the wait is over: `row` as it is now, `first` as it was when the wait began. */
export type WaitDone = (row: OperationRow, first: OperationRow) => boolean;

export class OperationWatch {
  constructor(
    private readonly store: Store,
    private readonly live: LiveSource,
  ) {}

  /**
   * The operation once `done` holds, or as it stands when `timeoutMs` has passed or
   * `signal` aborts; undefined when the tenant has no such operation.
   */
  async until(tenantId: string, id: string, done: WaitDone, timeoutMs: number, signal?: AbortSignal): Promise<OperationRow | undefined> {
    // The position first, then the read: a change committed after the read is after the position too.
    const position = await this.live.position(tenantId);
    const first = await this.store.operations.getForTenant(tenantId, id);
    if (!first || done(first, first) || timeoutMs <= 0 || signal?.aborted) return first;
    const read = async () => (await this.store.operations.getForTenant(tenantId, id)) ?? first;

    return new Promise<OperationRow>((resolve) => {
      let over = false;
      let subscription: { close(): void } | undefined;
      const finish = (row: OperationRow) => {
        if (over) return;
        over = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        subscription?.close();
        resolve(row);
      };
      // At the end, the row as it is then: a change the feed had not yet delivered is still shown.
      const finishFresh = () => void read().then(finish, () => finish(first));
      const onAbort = () => finishFresh();
      const timer = setTimeout(finishFresh, timeoutMs).unref();
      signal?.addEventListener('abort', onAbort, { once: true });
      subscription = this.live.subscribe(
        tenantId,
        position,
        async (change) => {
          if (over || !(change.many || change.operationIds.includes(id))) return;
          const row = await read().catch(() => undefined);
          if (row && done(row, first)) finish(row);
        },
        finishFresh,
      );
      // The feed may have delivered (and ended the wait) before subscribe returned.
      if (over) subscription.close();
    });
  }
}
