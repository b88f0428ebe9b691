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
 * explicitly). So: note the transaction ids running in this database when a gap is
 * seen; once all of them have ended, every seq up to the highest one then visible is
 * final. A transaction that never ends (an unrelated long one in the list) would stall
 * live delivery, so after `maxGapWaitMs` the gap is passed anyway and logged; its
 * notifications are still in the table (and delivered to subscribers).
 *
 * The running ids are read from the backends themselves (`pg_stat_activity.backend_xid`,
 * and prepared transactions), not from a snapshot's in-progress list: since PostgreSQL
 * 14 a snapshot's `xmax` is one past the latest *completed* transaction, and a running
 * transaction whose id is above it is not listed at all. The writer of a gap is often
 * exactly that one (it took its id after the writer of the visible row above the gap,
 * which has committed), so a horizon trusting the list passed its seq before it
 * committed, and a live stream skipped the row (seen as a notification missing from
 * one instance's stream when three wrote at once).
 *
 * The table and column are parameters so another ordered outbox reader can use
 * the same logic.
 */
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../store/db.js';

/** A look at the horizon: `safe`, and whether it is `held` below rows already visible. */
export interface HorizonLook {
  /** Every row with seq ≤ safe that will ever exist is visible now. */
  safe: number;
  /**
   * The look stopped at a gap whose writers were still in flight: the horizon will move
   * once they end, with or without a new commit to wake anyone (the writer holding the
   * gap open may be any transaction of the database, one that notifies nobody).
   */
  held: boolean;
}

export interface EventHorizon {
  /** Every row with seq ≤ the answer that will ever exist is visible now. */
  current(): Promise<number>;
  /** The same, with whether it is held at a gap, both as of the one look. */
  look(): Promise<HorizonLook>;
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

  /** Seqs become visible in order: never a gap to wait on. */
  async look(): Promise<HorizonLook> {
    return { safe: await this.current(), held: false };
  }

  startingPoint(): Promise<number> {
    return this.current();
  }
}

interface Pending {
  /** Ids up to here are final once `running` have all ended. */
  upTo: number;
  /** Top-level transaction ids (32-bit, as text) running in this database when the gap was seen. */
  running: string[];
  since: number;
  /** The first look: nothing is known below `upTo` until it resolves. */
  initial?: boolean;
}

const PAGE = 1000;

/**
 * Top-level transaction ids (as text) of the transactions running in this database,
 * prepared ones included. Only this database's can write our table: one running in
 * another database of the server (another application's, another test's) must not hold
 * our streams up. Sessions and their transaction ids are visible to every role.
 */
const RUNNING_XIDS = sql`
  SELECT backend_xid::text FROM pg_stat_activity WHERE datname = current_database() AND backend_xid IS NOT NULL
  UNION ALL
  SELECT transaction::text FROM pg_prepared_xacts WHERE database = current_database()`;

export class PgEventHorizon implements EventHorizon {
  /** All ids ≤ safe are final; -1 until the first look. */
  private safe = -1;
  private pending: Pending | undefined;
  private inflight: Promise<HorizonLook> | undefined;
  private queued: Promise<HorizonLook> | undefined;

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
  look(): Promise<HorizonLook> {
    if (!this.inflight) {
      this.inflight = this.refresh().finally(() => (this.inflight = undefined));
      return this.inflight;
    }
    this.queued ??= this.inflight
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.look();
      });
    return this.queued;
  }

  async current(): Promise<number> {
    return (await this.look()).safe;
  }

  /** Where this look ended: taken together, so that no other look can change one between them. */
  private ended(): HorizonLook {
    return { safe: this.safe, held: this.pending !== undefined };
  }

  private async refresh(): Promise<HorizonLook> {
    if (this.safe < 0) {
      // First look: the current maximum is final once everything in flight now has ended.
      const { rows } = await sql<{ max: number | null; running: string[] }>`
        SELECT (SELECT max(${this.col}) FROM ${this.table}) AS max, ARRAY(${RUNNING_XIDS}) AS running`.execute(this.db.kysely);
      const max = Number(rows[0]?.max ?? 0);
      this.safe = 0;
      this.pending = { upTo: max, running: rows[0]!.running, since: Date.now(), initial: true };
    }
    if (this.pending && (await this.pendingResolved(this.pending))) {
      this.safe = Math.max(this.safe, this.pending.upTo);
      this.pending = undefined;
    }
    // Walking up from 0 over a long history would be wasted: wait for the first look to settle.
    if (this.pending?.initial) return this.ended();
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
          // A writer of a seq below the highest we read that has not committed by now is running now.
          const now = await sql<{ running: string[] }>`SELECT ARRAY(${RUNNING_XIDS}) AS running`.execute(this.db.kysely);
          this.pending = { upTo: Number(rows[rows.length - 1]!.id), running: now.rows[0]!.running, since: Date.now() };
          if (await this.pendingResolved(this.pending)) {
            this.safe = this.pending.upTo;
            this.pending = undefined;
            continue;
          }
        }
        return this.ended();
      }
      if (rows.length < PAGE) return this.ended();
    }
  }

  private get table() {
    return sql.table(this.seq.table);
  }

  private get col() {
    return sql.ref(this.seq.column);
  }

  private async pendingResolved(p: Pending): Promise<boolean> {
    if (p.running.length === 0) return true;
    // A backend's id is cleared at the moment its transaction leaves every new snapshot's
    // in-progress view, so once an id is gone its rows are visible (or rolled back). The
    // commit log is not asked (pg_xact_status): it says committed a moment before that,
    // while the rows are still invisible (seen once after a frozen server was thawed).
    const { rows } = await sql<{ running: number }>`
      SELECT count(*)::int AS running FROM unnest(${p.running}::text[]) AS x WHERE x IN (${RUNNING_XIDS})`.execute(this.db.kysely);
    if (Number(rows[0]?.running ?? 0) === 0) return true;
    if (Date.now() - p.since > this.maxGapWaitMs) {
      this.log.warn({ up_to: p.upTo, waited_ms: Date.now() - p.since }, `horizon of ${this.seq.table}: passing a gap held by a long transaction; live streams may miss its rows`);
      return true;
    }
    return false;
  }
}

export function eventHorizonFor(db: Db, log: Logger, seq: SeqColumn = NOTIFICATIONS_SEQ): EventHorizon {
  return db.dialect === 'postgres' ? new PgEventHorizon(db, log, 30_000, seq) : new SqliteHorizon(db, seq);
}
