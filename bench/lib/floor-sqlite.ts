/**
 * The durable floors' storage (BENCHMARKS.md, Targets): what the cheapest program that
 * keeps our durability contract must pay, and nothing more.
 *
 * - `openFloorDb`: a SQLite file as the orchestrator ships it: WAL and
 *   `synchronous=FULL` (an acknowledged write survives power loss), on the same disk
 *   as the orchestrator's database (a file under the bench's temp directory).
 * - `TurnCommitter`: group commit once per turn of the event loop. Every write queued
 *   during one turn (the I/O callbacks of that turn and their microtasks) runs in ONE
 *   `BEGIN IMMEDIATE … COMMIT`, flushed on `setImmediate`; each write's promise settles
 *   only after that COMMIT, so whatever a floor answers after `await write(...)` is
 *   durable. One fsync serves the whole turn, the way the orchestrator's own group
 *   commit works (src/store/tx.ts), minus everything a floor does not need: no
 *   savepoints (a floor's write is one statement, and SQLite undoes a failed statement
 *   by itself without ending the transaction), no cap on the group, no Kysely.
 *
 * better-sqlite3 is synchronous, as the orchestrator's hot statements are: the whole
 * group (statements, COMMIT and its fsync) runs in one go on the event loop.
 */
import SQLite from 'better-sqlite3';

/** Opens (creates) a floor's SQLite file with the shipped durability, and runs its schema. */
export function openFloorDb(path: string, schema: string): SQLite.Database {
  const db = new SQLite(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(schema);
  return db;
}

interface Pending {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export class TurnCommitter {
  private queue: Pending[] = [];
  private scheduled = false;
  private readonly begin: SQLite.Statement;
  private readonly commit: SQLite.Statement;
  private readonly rollback: SQLite.Statement;
  /** Groups committed and writes in them (to print the mean group size). */
  readonly stats = { commits: 0, writes: 0 };

  constructor(private readonly db: SQLite.Database) {
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
  }

  /**
   * Queues `write` (synchronous statements on this committer's database) into this
   * turn's group; resolves with its result once the group's COMMIT has returned,
   * rejects with its own error (the others still commit) or with the COMMIT's.
   */
  write<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ write, resolve: resolve as (v: unknown) => void, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    this.scheduled = false;
    const group = this.queue;
    this.queue = [];
    const outcomes: Array<{ ok: boolean; value: unknown }> = [];
    try {
      this.begin.run();
      for (const p of group) {
        try {
          outcomes.push({ ok: true, value: p.write() });
        } catch (err) {
          // An error that ended the transaction (I/O, full disk) took the group's earlier writes with it.
          if (!this.db.inTransaction) throw err;
          outcomes.push({ ok: false, value: err });
        }
      }
      this.commit.run();
    } catch (err) {
      if (this.db.inTransaction) this.rollback.run();
      for (const p of group) p.reject(err);
      return;
    }
    this.stats.commits++;
    this.stats.writes += group.length;
    group.forEach((p, i) => (outcomes[i]!.ok ? p.resolve(outcomes[i]!.value) : p.reject(outcomes[i]!.value)));
  }
}
