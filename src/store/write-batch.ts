/**
 * The writes of one page of claimed work, committed together (SQLite).
 *
 * The scheduler claims a page of due operations and sends their polls at once, so
 * their replies come back close together. Written as each one arrives they fell into
 * several grouped commits (one per event-loop turn that saw replies: ~25 polls per
 * commit at 64 in flight), each with its own fsync. Here each claimed row gets a
 * slot: the first write a slot asks for is held until every slot of the page has
 * either asked for its write or finished without one (or until `maxWaitMs` after the
 * first held write), and then all the held writes are queued in the same turn, so
 * they run as ONE grouped transaction (src/store/tx.ts): one fsync for the page.
 *
 * Nothing is acknowledged early: a held write's promise settles after the COMMIT of
 * its group, like any write job, so a poll's lease is given up only with its result
 * committed; a crash before that leaves the lease to expire and the poll to run again,
 * as a crash during the call would. A slow reply delays the page's other writes by
 * `maxWaitMs` at most; what a slot writes after its page was flushed is written at once.
 *
 * PostgreSQL: nothing is held (its commits already run side by side); every write is
 * its own transaction, as without a batch.
 */
import type { Db } from './db.js';
import { inWriteTransaction, type Tx } from './tx.js';

export interface WriteSlot {
  /** A write transaction; the slot's first one is held to share the page's commit. */
  write<T>(fn: (trx: Tx) => Promise<T>): Promise<T>;
  /**
   * The same for a write that queues itself: `start` must queue its write job at once
   * when called (e.g. OperationsRepo.mutate, which the group may then batch with the
   * page's others: src/store/tx.ts, Batcher). Held like `write`.
   */
  hold<T>(start: () => Promise<T>): Promise<T>;
  /** The slot's work is over, written or not: the page no longer waits for it. */
  done(): void;
}

export class WriteBatch {
  private held: Array<() => void> = [];
  private settled = 0;
  private flushed = false;
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param size how many slots the page has (one per claimed row)
   * @param onFlush called right after the held writes are queued, in the same turn (so
   *   a write it queues joins their commit), with how many were held
   */
  constructor(
    private readonly db: Db,
    private readonly size: number,
    private readonly maxWaitMs: number,
    private readonly onFlush?: (heldWrites: number) => void,
  ) {}

  slot(): WriteSlot {
    let state: 'open' | 'held' | 'done' = 'open';
    const hold = <T>(start: () => Promise<T>): Promise<T> => {
      if (state !== 'open' || this.flushed || this.db.dialect !== 'sqlite') return start();
      state = 'held';
      return new Promise<T>((resolve, reject) => {
        this.held.push(() => {
          start().then(resolve, reject);
        });
        this.settle();
      });
    };
    return {
      write: <T>(fn: (trx: Tx) => Promise<T>): Promise<T> => hold(() => inWriteTransaction(this.db, fn)),
      hold,
      done: () => {
        // A slot that held a write was counted when it asked for it.
        if (state === 'open') this.settle();
        state = 'done';
      },
    };
  }

  private settle(): void {
    this.settled++;
    if (this.settled >= this.size) {
      this.flush();
      return;
    }
    if (this.held.length === 1 && this.timer === undefined && !this.flushed) {
      this.timer = setTimeout(() => this.flush(), this.maxWaitMs);
    }
  }

  private flush(): void {
    if (this.flushed) return;
    this.flushed = true;
    clearTimeout(this.timer);
    const jobs = this.held;
    this.held = [];
    // Each queues its job synchronously (inWriteTransaction, inWriteBatch): these all land in one group.
    for (const queue of jobs) queue();
    if (jobs.length > 0) this.onFlush?.(jobs.length);
  }
}
