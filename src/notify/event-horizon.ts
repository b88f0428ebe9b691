/**
 * The horizon: the highest `notifications.seq` below which nothing new can still
 * appear. Live readers only hand out notifications up to it, so a stream that has
 * sent seq N never later finds a smaller seq it skipped.
 *
 * SQLite has one writer at a time (BEGIN IMMEDIATE) and AUTOINCREMENT rolls back
 * with its transaction, so seqs become visible in order: the highest visible one
 * is the horizon.
 *
 * PostgreSQL hands out `bigserial` values when rows are inserted, but transactions
 * commit in any order: seq 101 may be visible while 100 is still in flight (or was
 * rolled back and never will be). A gap below a visible seq belongs to a
 * transaction that was running when we looked, because every writer of
 * notifications holds a transaction id before it draws a seq (the operations repo
 * has locked or inserted the operation row; NotificationsRepo.insertIn takes one
 * explicitly). So: note the snapshot's in-progress transaction ids when a gap is
 * seen; once all of them (those of this database: the others cannot write here)
 * have ended, every seq up to the highest one then visible is final. A transaction
 * that never ends (an unrelated long one in the list) would stall live delivery, so after `maxGapWaitMs` the gap is passed anyway and
 * logged; its notifications are still in the table (and delivered to subscribers).
 *
 * The table and column are parameters so another ordered outbox reader can use
 * the same logic.
 */
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../store/db.js';

export interface EventHorizon {
  /** Every row with seq ≤ the answer that will ever exist is visible now. */
  current(): Promise<number>;
  /**
   * Where a reader that wants only what comes from now on starts: the horizon, or
   * while PostgreSQL's first look is still settling, the highest seq seen then
   * (not 0, which would replay the whole history).
   */
  startingPoint(): Promise<number>;
}

export interface SeqColumn {
  table: string;
  column: string;
}

const NOTIFICATIONS_SEQ: SeqColumn = { table: 'notifications', column: 'seq' };

/** SQLite: seqs are visible in order, so the highest visible one is safe. */
export class SqliteHorizon implements EventHorizon {
  constructor(
    private readonly db: Db,
    private readonly seq: SeqColumn = NOTIFICATIONS_SEQ,
  ) {}

  async current(): Promise<number> {
    const { rows } = await sql<{ max: number | null }>`SELECT max(${sql.ref(this.seq.column)}) AS max FROM ${sql.table(this.seq.table)}`.execute(this.db.kysely);
    return Number(rows[0]?.max ?? 0);
  }

  startingPoint(): Promise<number> {
    return this.current();
  }
}

interface Pending {
  /** Ids up to here are final once `xip` have all ended. */
  upTo: number;
  /** Transaction ids (xid8, as text) in progress when the gap was seen. */
  xip: string[];
  since: number;
  /** The first look: nothing is known below `upTo` until it resolves. */
  initial?: boolean;
}

const PAGE = 1000;

export class PgEventHorizon implements EventHorizon {
  /** All ids ≤ safe are final; -1 until the first look. */
  private safe = -1;
  private pending: Pending | undefined;
  private inflight: Promise<number> | undefined;
  private queued: Promise<number> | undefined;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly maxGapWaitMs = 30_000,
    private readonly seq: SeqColumn = NOTIFICATIONS_SEQ,
  ) {}

  async startingPoint(): Promise<number> {
    const safe = await this.current();
    return this.pending?.initial ? Math.max(safe, this.pending.upTo) : safe;
  }

  /**
   * Coalesces callers: at most one look at the database runs, and a caller that
   * arrives while one runs gets the next one (which starts after its arrival, so
   * it sees every commit that woke the caller).
   */
  current(): Promise<number> {
    if (!this.inflight) {
      this.inflight = this.refresh().finally(() => (this.inflight = undefined));
      return this.inflight;
    }
    this.queued ??= this.inflight
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.current();
      });
    return this.queued;
  }

  private async refresh(): Promise<number> {
    if (this.safe < 0) {
      // First look: the current maximum is final once everything in flight now has ended.
      const { rows } = await sql<{ max: number | null; snap: string }>`
        SELECT (SELECT max(${this.col}) FROM ${this.table}) AS max, pg_current_snapshot()::text AS snap`.execute(this.db.kysely);
      const max = Number(rows[0]?.max ?? 0);
      this.safe = 0;
      this.pending = { upTo: max, xip: xipOf(rows[0]!.snap), since: Date.now(), initial: true };
    }
    if (this.pending && (await this.pendingResolved(this.pending))) {
      this.safe = Math.max(this.safe, this.pending.upTo);
      this.pending = undefined;
    }
    // Walking up from 0 over a long history would be wasted: wait for the first look to settle.
    if (this.pending?.initial) return this.safe;
    // Walk forward over visible ids while they are contiguous; stop at the first gap.
    for (;;) {
      const { rows } = await sql<{ id: number }>`
        SELECT ${this.col} AS id FROM ${this.table} WHERE ${this.col} > ${this.safe} ORDER BY ${this.col} LIMIT ${PAGE}`.execute(this.db.kysely);
      let i = 0;
      while (i < rows.length && Number(rows[i]!.id) === this.safe + 1) this.safe = Number(rows[i++]!.id);
      if (i < rows.length) {
        // A gap: remember who might still fill it (only the first gap matters; later
        // looks re-check until it closes).
        if (!this.pending || this.pending.upTo <= this.safe) {
          const snap = await sql<{ snap: string }>`SELECT pg_current_snapshot()::text AS snap`.execute(this.db.kysely);
          // Ids visible before this snapshot was taken are all ≤ the highest one we read.
          this.pending = { upTo: Number(rows[rows.length - 1]!.id), xip: xipOf(snap.rows[0]!.snap), since: Date.now() };
          if (await this.pendingResolved(this.pending)) {
            this.safe = this.pending.upTo;
            this.pending = undefined;
            continue;
          }
        }
        return this.safe;
      }
      if (rows.length < PAGE) return this.safe;
    }
  }

  private get table() {
    return sql.table(this.seq.table);
  }

  private get col() {
    return sql.ref(this.seq.column);
  }

  private async pendingResolved(p: Pending): Promise<boolean> {
    if (p.xip.length === 0) return true;
    // A snapshot lists the whole server's transactions; only those of this database can
    // write our table, so one running elsewhere (another application's, another test
    // database's) must not hold our streams up. Sessions and their transaction ids are
    // visible to every role; xid8 is (epoch << 32) | xid.
    // "Still running" is asked of a fresh snapshot, not of pg_xact_status: a committing
    // transaction is marked committed in the commit log a moment before it leaves the
    // snapshot's in-progress list, and in that moment its rows are still invisible, so a
    // horizon moved on pg_xact_status's word could pass a row that appears just after
    // (seen once after a frozen server was thawed, when a backend paused in between).
    const { rows } = await sql<{ running: number }>`
      SELECT count(*)::int AS running FROM unnest(${p.xip}::xid8[]) AS x
      WHERE x IN (SELECT pg_snapshot_xip(pg_current_snapshot()))
        AND (x::text::bigint % 4294967296) IN (
          SELECT backend_xid::text::bigint FROM pg_stat_activity WHERE datname = current_database() AND backend_xid IS NOT NULL
          UNION ALL
          SELECT transaction::text::bigint FROM pg_prepared_xacts WHERE database = current_database())`.execute(this.db.kysely);
    if (Number(rows[0]?.running ?? 0) === 0) return true;
    if (Date.now() - p.since > this.maxGapWaitMs) {
      this.log.warn({ up_to: p.upTo, waited_ms: Date.now() - p.since }, `horizon of ${this.seq.table}: passing a gap held by a long transaction; live streams may miss its rows`);
      return true;
    }
    return false;
  }
}

/** The in-progress list of a `pg_snapshot` text form `xmin:xmax:xip,xip,...`. */
function xipOf(snapshot: string): string[] {
  const list = snapshot.split(':')[2] ?? '';
  return list ? list.split(',') : [];
}

export function eventHorizonFor(db: Db, log: Logger, seq: SeqColumn = NOTIFICATIONS_SEQ): EventHorizon {
  return db.dialect === 'postgres' ? new PgEventHorizon(db, log, 30_000, seq) : new SqliteHorizon(db, seq);
}
