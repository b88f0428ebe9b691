/**
 * Status reads of live buys, grouped: the buys whose `get_media_buys` falls due in
 * the same turn of the event loop, at the same seller and under the same account,
 * are asked in one call naming them all (`media_buy_ids`), and each gets the one
 * reply to find itself in.
 *
 * Why: the contract reads a buy's status after every report it takes, and a seller
 * that reports on the hour fires for all its buys at once; one MCP call per buy cost
 * more than the report itself (BENCHMARKS.md, reporting fires). A claimed page of
 * buys starts its reads together, so a group forms without waiting: it is sent on
 * `setImmediate`, after the page's other buys have asked.
 *
 * Each buy's own lease, timers and writes are unchanged: only the call is shared.
 * The call runs once, through whatever `send` the first buy of the group gave (the
 * agent's breaker and metrics count one call, as the seller sees one), and its
 * outcome, a reply or a failure, is every member's.
 */

/** At most this many buys per call: the spec's page of `get_media_buys` holds 100; half keeps clear of any seller's smaller page. */
export const MAX_BUYS_PER_STATUS_READ = 50;

interface Group<R> {
  ids: string[];
  send: (mediaBuyIds: string[]) => Promise<R>;
  settle: { resolve: (r: R) => void; reject: (err: unknown) => void };
  done: Promise<R>;
}

export class GroupedStatusReads<R> {
  private readonly open = new Map<string, Group<R>>();

  /**
   * The read of `mediaBuyId`, in the group of `groupKey` (the seller's agent and the
   * account) still being formed, or a new one that `send` will ask.
   */
  read(groupKey: string, mediaBuyId: string, send: (mediaBuyIds: string[]) => Promise<R>): Promise<R> {
    let group = this.open.get(groupKey);
    if (!group || group.ids.length >= MAX_BUYS_PER_STATUS_READ) {
      group = this.startGroup(groupKey, send);
    }
    if (!group.ids.includes(mediaBuyId)) group.ids.push(mediaBuyId);
    return group.done;
  }

  private startGroup(groupKey: string, send: (mediaBuyIds: string[]) => Promise<R>): Group<R> {
    let settle!: Group<R>['settle'];
    const done = new Promise<R>((resolve, reject) => {
      settle = { resolve, reject };
    });
    const group: Group<R> = { ids: [], send, settle, done };
    this.open.set(groupKey, group);
    setImmediate(() => {
      // A full group was replaced by a new one already; only the open one is closed here.
      if (this.open.get(groupKey) === group) this.open.delete(groupKey);
      group.send([...group.ids]).then(group.settle.resolve, group.settle.reject);
    });
    return group;
  }
}

/** The group of a buy's status read: its seller's agent and the account it was bought under. */
export function statusGroupKey(agentId: string, account: string | null): string {
  return `${agentId}\u0000${account ?? ''}`;
}
