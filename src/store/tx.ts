/**
 * A write transaction that behaves the same on both dialects.
 *
 * SQLite: `BEGIN IMMEDIATE` takes the write lock up front, so a transaction that
 * reads a row and then updates it can never fail half-way with SQLITE_BUSY when
 * another process wrote in between (a deferred BEGIN would upgrade too late).
 * Write jobs are group-committed (docs/ARCHITECTURE.md, Storage): every job queued in the same
 * event-loop turn (up to MAX_GROUP) runs in ONE `BEGIN IMMEDIATE … COMMIT`, each
 * after its own SAVEPOINT, so a job that throws rolls back only its own writes
 * and rejects only its own promise. Every promise settles after the COMMIT (or
 * the ROLLBACK), so nothing is acknowledged before it is durable, and one fsync
 * serves the whole group.
 *
 * A job MUST only await database calls on the connection it is given: jobs run
 * one after another on SQLite's single connection while the write lock is held,
 * so awaiting anything else (a timer, a network call, a query through the
 * top-level Kysely instance) stalls or deadlocks the group.
 *
 * Another process holding the write lock (a CLI command, a `sqlite3` shell, a backup)
 * makes BEGIN IMMEDIATE fail with SQLITE_BUSY after a short synchronous wait (the
 * connection's busy_timeout, src/store/db.ts). The group then waits for the lock
 * asynchronously, off the connection, so reads and the rest of the process go on
 * meanwhile, and tries again, taking in the jobs queued since (none of them has run);
 * after SQLITE_WRITE_LOCK_WAIT_MS it fails with that SQLITE_BUSY, which callers treat
 * as the database being unavailable (503).
 *
 * Batched jobs (inWriteBatch): a job may also say what it is (an item of a Batcher's
 * kind). The group then runs all its items of one kind together, in one savepoint, with
 * multi-row statements instead of one statement per job per table; an item the batcher
 * leaves alone, or every item when the batcher throws (its savepoint rolled back), runs
 * its own job after, as if it had never been batched. Same commit, same guarantees.
 *
 * PostgreSQL: an ordinary transaction per job on a pooled connection (commits are
 * already concurrent there); callers lock rows with FOR UPDATE.
 */
import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import type { Db } from './db.js';
import type { Database } from './schema.js';
import type { DirectSqlite } from './direct.js';

export type Tx = Kysely<Database> | Transaction<Database>;

export interface WriteOptions {
  /**
   * SQLite only: false runs the job in its own transaction and commit, not grouped
   * with others (for work that must not share a commit, or that awaits more than
   * database calls on its connection). Default true.
   */
  group?: boolean;
}

/** Most jobs in one grouped transaction; the rest go in the next one. */
export const MAX_GROUP = 200;

/** How long a write waits for SQLite's write lock held by another process before it fails. */
export const SQLITE_WRITE_LOCK_WAIT_MS = 5_000;

/** SQLITE_BUSY and its extended codes: the write lock is another connection's. */
function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** Between two tries for the write lock: short at first, then at most a quarter second. */
function lockRetryDelay(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.min(250, 25 * 2 ** attempt)));
}

/** BEGIN IMMEDIATE failed for want of the lock: nothing ran, the job(s) may simply try again. */
class LockBusy extends Error {
  constructor(readonly busy: unknown) {
    super('SQLite write lock held by another connection');
  }
}

async function beginImmediate(conn: Tx, direct: DirectSqlite | undefined): Promise<void> {
  try {
    await raw(conn, 'BEGIN IMMEDIATE', direct);
  } catch (err) {
    throw isBusy(err) ? new LockBusy(err) : err;
  }
}

export async function inWriteTransaction<T>(db: Db, fn: (trx: Tx) => Promise<T>, opts: WriteOptions = {}): Promise<T> {
  if (db.dialect === 'postgres') {
    return db.kysely.transaction().execute(fn);
  }
  if (opts.group === false) return ownTransaction(db, fn);
  return committerOf(db).enqueue(fn);
}

/**
 * Work of one kind that a group commit may do for several jobs at once (SQLite): one
 * statement per table for all of them instead of one per job.
 */
export interface Batcher<I, T> {
  /**
   * Does the work of `items` (in queue order) on `trx`. Per item: `{ value }` (what its
   * own job would have returned), or undefined to leave it to its own job, which runs
   * after, in the same transaction. Throwing undoes everything it wrote, and every
   * item's own job runs instead. Only database calls on `trx` may be awaited.
   */
  run(trx: Tx, items: I[]): Promise<Array<{ value: T } | undefined>>;
}

/**
 * A write job, `own`, that a grouped transaction may instead run together with the
 * other items of `batcher` queued in the same turn (see Batcher). Either way it is
 * settled after its group's COMMIT. PostgreSQL: `own` in its own transaction.
 */
export function inWriteBatch<I, T>(db: Db, batcher: Batcher<I, T>, item: I, own: (trx: Tx) => Promise<T>): Promise<T> {
  if (db.dialect === 'postgres') return db.kysely.transaction().execute(own);
  return committerOf(db).enqueue(own, { batcher: batcher as Batcher<unknown, unknown>, item });
}

function committerOf(db: Db): GroupCommitter {
  let committer = committers.get(db.kysely);
  if (!committer) {
    committer = new GroupCommitter(db.kysely, db.direct);
    committers.set(db.kysely, committer);
  }
  return committer;
}

/** A transaction-control statement on a held connection (straight to SQLite when it can, src/store/direct.ts). */
async function raw(conn: Tx, statement: string, direct?: DirectSqlite): Promise<void> {
  if (direct?.tryExecute(conn, statement, [])) return;
  await conn.executeQuery(CompiledQuery.raw(statement));
}

/**
 * Runs `fn` on Kysely's single SQLite connection (handed out under a mutex, so
 * nothing else interleaves), registered as held meanwhile so that the hot
 * statements of its jobs may skip Kysely's executor (src/store/direct.ts).
 */
function onConnection<T>(kysely: Kysely<Database>, direct: DirectSqlite | undefined, fn: (conn: Tx) => Promise<T>): Promise<T> {
  return kysely.connection().execute(async (conn) => {
    direct?.hold(conn);
    try {
      return await fn(conn);
    } finally {
      direct?.release(conn);
    }
  });
}

/** One job, one transaction (the behaviour before group commit). */
async function ownTransaction<T>(db: Db, fn: (trx: Tx) => Promise<T>): Promise<T> {
  const deadline = Date.now() + SQLITE_WRITE_LOCK_WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await ownTransactionOnce(db, fn);
    } catch (err) {
      if (!(err instanceof LockBusy)) throw err;
      if (Date.now() >= deadline) throw err.busy;
      await lockRetryDelay(attempt);
    }
  }
}

function ownTransactionOnce<T>(db: Db, fn: (trx: Tx) => Promise<T>): Promise<T> {
  return onConnection(db.kysely, db.direct, async (conn) => {
    await beginImmediate(conn, db.direct);
    try {
      const result = await fn(conn);
      await raw(conn, 'COMMIT', db.direct);
      return result;
    } catch (err) {
      await raw(conn, 'ROLLBACK', db.direct).catch(() => undefined);
      throw err;
    }
  });
}

interface Job {
  fn: (trx: Tx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  /** Set when the job may run batched with others of its kind (inWriteBatch). */
  batch?: { batcher: Batcher<unknown, unknown>; item: unknown };
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * A job's error left the transaction unusable (SQLite rolled it back itself): the group
 * must be redone without it. A batch that broke it has no one culprit: `culprit` is then
 * the batch's members, which are redone unbatched (each its own job).
 */
class GroupBroken extends Error {
  constructor(
    readonly culprit: number | { batch: number[] },
    readonly jobError: unknown,
  ) {
    super('a write job broke the grouped transaction');
  }
}

const committers = new WeakMap<Kysely<Database>, GroupCommitter>();

class GroupCommitter {
  private queue: Job[] = [];
  private scheduled = false;
  private running = false;

  constructor(
    private readonly kysely: Kysely<Database>,
    private readonly direct: DirectSqlite | undefined,
  ) {}

  enqueue<T>(fn: (trx: Tx) => Promise<T>, batch?: Job['batch']): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject, batch });
      this.schedule();
    });
  }

  /**
   * Flush in the check phase of this event-loop turn: every job queued by the I/O
   * callbacks (and their microtasks) of this turn joins the group. While a group
   * runs, new jobs wait for the next turn, so I/O that arrived during its fsync
   * is read first and joins the next group.
   */
  private schedule(): void {
    if (this.scheduled || this.running) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.running = true;
    let batch = this.queue.splice(0, MAX_GROUP);
    const lockDeadline = Date.now() + SQLITE_WRITE_LOCK_WAIT_MS;
    let lockAttempt = 0;
    try {
      if (batch.length === 0) return;
      for (;;) {
        try {
          const outcomes = await this.runGroup(batch);
          batch.forEach((job, i) => {
            const o = outcomes[i]!;
            if (o.ok) job.resolve(o.value);
            else job.reject(o.error);
          });
          break;
        } catch (err) {
          if (err instanceof LockBusy) {
            // Another process holds the write lock: wait for it off the connection (reads go on), with
            // whatever was queued meanwhile, until the deadline; then every job fails with its SQLITE_BUSY.
            if (Date.now() < lockDeadline) {
              await lockRetryDelay(lockAttempt++);
              batch = batch.concat(this.queue.splice(0, MAX_GROUP - batch.length));
              continue;
            }
            for (const job of batch) job.reject(err.busy);
            break;
          }
          if (err instanceof GroupBroken) {
            // Nothing was committed. The culprit fails; the others run again without it.
            const culprit = err.culprit;
            if (typeof culprit !== 'number') {
              // A batch: its members run again as their own jobs, where a culprit can be told apart.
              for (const i of culprit.batch) batch[i]!.batch = undefined;
              continue;
            }
            batch[culprit]!.reject(err.jobError);
            batch = batch.filter((_, i) => i !== culprit);
            if (batch.length > 0) continue;
            break;
          }
          // BEGIN or COMMIT failed: nothing of this group is durable.
          for (const job of batch) job.reject(err);
          break;
        }
      }
    } finally {
      this.running = false;
      if (this.queue.length > 0) this.schedule();
    }
  }

  private runGroup(batch: Job[]): Promise<Outcome[]> {
    return onConnection(this.kysely, this.direct, async (conn) => {
      const d = this.direct;
      const outcomes: Array<Outcome | undefined> = [];
      await beginImmediate(conn, d);
      try {
        if (batch.length === 1) {
          // Alone: its own error rolls the whole (single-job) transaction back.
          outcomes.push({ ok: true, value: await batch[0]!.fn(conn) });
        } else {
          // A batcher that did nothing for what it was given is not asked again in this group.
          const spent = new Set<Batcher<unknown, unknown>>();
          for (let i = 0; i < batch.length; i++) {
            const batcher = batch[i]!.batch?.batcher;
            if (outcomes[i] === undefined && batcher && !spent.has(batcher)) {
              if ((await this.runBatched(conn, batch, i, outcomes)) === 0) spent.add(batcher);
            }
            if (outcomes[i] === undefined) outcomes[i] = await this.runOwn(conn, batch[i]!, i);
          }
        }
        await raw(conn, 'COMMIT', d);
        return outcomes as Outcome[];
      } catch (err) {
        await raw(conn, 'ROLLBACK', d).catch(() => undefined);
        if (batch.length === 1 && !(err instanceof GroupBroken)) return [{ ok: false, error: err }];
        throw err;
      }
    });
  }

  /**
   * One job in its own savepoint, left open when the job succeeds: the next job's nests
   * inside it and COMMIT ends them all (at most MAX_GROUP deep), which saves a RELEASE
   * statement per job. A job that throws is rolled back to its own savepoint (the latest
   * of that name), which is then dropped.
   */
  private async runOwn(conn: Tx, job: Job, index: number): Promise<Outcome> {
    const d = this.direct;
    await raw(conn, 'SAVEPOINT group_job', d);
    try {
      return { ok: true, value: await job.fn(conn) };
    } catch (error) {
      try {
        await raw(conn, 'ROLLBACK TO group_job', d);
        await raw(conn, 'RELEASE group_job', d);
      } catch {
        throw new GroupBroken(index, error);
      }
      return { ok: false, error };
    }
  }

  /**
   * Job `first` and every later job of the same batcher not yet run, together in one
   * savepoint (see Batcher). Fills the outcomes of the items the batcher did; the others
   * are left for later: a next batch of what is left (e.g. a second change of an
   * operation, which the batchers leave to a read after the first), else their own jobs.
   * Fewer than two: nothing to gain, each runs its own. Returns how many it did.
   */
  private async runBatched(conn: Tx, batch: Job[], first: number, outcomes: Array<Outcome | undefined>): Promise<number> {
    const batcher = batch[first]!.batch!.batcher;
    const members: number[] = [];
    for (let j = first; j < batch.length; j++) if (outcomes[j] === undefined && batch[j]!.batch?.batcher === batcher) members.push(j);
    if (members.length < 2) return 0;
    const d = this.direct;
    await raw(conn, 'SAVEPOINT group_job', d);
    let results: Array<{ value: unknown } | undefined>;
    try {
      results = await batcher.run(
        conn,
        members.map((j) => batch[j]!.batch!.item),
      );
    } catch (error) {
      try {
        await raw(conn, 'ROLLBACK TO group_job', d);
        await raw(conn, 'RELEASE group_job', d);
      } catch {
        throw new GroupBroken({ batch: members }, error);
      }
      return 0;
    }
    let done = 0;
    members.forEach((j, k) => {
      const r = results[k];
      if (!r) return;
      outcomes[j] = { ok: true, value: r.value };
      done++;
    });
    return done;
  }

}
