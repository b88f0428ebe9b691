/**
 * The `instances` table: one row per running `serve`, and the one place where the
 * leases of an instance known to be gone are handed back.
 *
 * Heartbeats and ages are measured on the database's clock, never the caller's, so
 * instances on hosts whose clocks disagree still agree on who is alive. Releasing a
 * lease clears its owner and expiry and makes the operation due now; `lease_epoch`
 * is left alone, so a presumed-dead owner that was only paused is still fenced out
 * of every write (OperationsRepo.mutate compares owner and epoch), and the next
 * claim raises the epoch again.
 */
import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from './db.js';
import type { InstancesTable } from './schema.js';
import { inWriteTransaction, type Tx } from './tx.js';
import { INSTANCE_LOCK_NAMESPACE } from './instance-lock.js';

export type InstanceRow = Selectable<InstancesTable>;
/** A row with its heartbeat's age (ms, database clock) when read. */
export type InstanceView = InstanceRow & { age_ms: number };
export type NewInstance = Pick<InstanceRow, 'id' | 'pid' | 'hostname'> & { url?: string | null; lock_key?: number | null };

export interface Released {
  operations: number;
  jobs: number;
}

export type FileClaim =
  | { outcome: 'taken'; replaced: InstanceView[]; released: Released }
  | { outcome: 'held'; holder: InstanceView };

export class InstancesRepo {
  constructor(private readonly db: Db) {}

  /** Now, in epoch ms, from the database's clock. */
  private dbNow(): RawBuilder<number> {
    return this.db.dialect === 'postgres'
      ? sql<number>`(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint`
      : sql<number>`CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER)`;
  }

  /**
   * SQLite: makes `me` the one serving process of this file, unless `holds` says
   * an existing row is a live holder. Read, decide and write happen under the
   * write lock (BEGIN IMMEDIATE), so of two `serve`s starting at once exactly one
   * wins and the other sees its row. Taking over deletes the other rows and
   * releases every lease not ours: only the file's holder can be working it.
   * `holds` must be synchronous (it runs while the lock is held).
   */
  async claimFile(me: NewInstance, holds: (row: InstanceView) => boolean, now: number): Promise<FileClaim> {
    return inWriteTransaction(
      this.db,
      async (trx) => {
        const others = (await this.listIn(trx)).filter((r) => r.id !== me.id);
        const holder = others.find(holds);
        if (holder) return { outcome: 'held' as const, holder };
        await trx.deleteFrom('instances').where('id', '!=', me.id).execute();
        const released = await this.releaseWhere(trx, sql`lease_owner IS NOT NULL AND lease_owner <> ${me.id}`, sql`owner <> ${me.id}`, now);
        await this.upsert(trx, me);
        return { outcome: 'taken' as const, replaced: others, released };
      },
      { group: false },
    );
  }

  /** Adds (or refreshes) this instance's row. */
  async register(me: NewInstance): Promise<void> {
    await inWriteTransaction(this.db, (trx) => this.upsert(trx, me));
  }

  /** Refreshes our heartbeat; false when our row is gone (another instance declared us dead, or took the file over). */
  async heartbeat(id: string): Promise<boolean> {
    const res = await inWriteTransaction(this.db, (trx) =>
      trx.updateTable('instances').set({ heartbeat_at: this.dbNow() }).where('id', '=', id).executeTakeFirst(),
    );
    return Number(res.numUpdatedRows) === 1;
  }

  async setUrl(id: string, url: string): Promise<void> {
    await inWriteTransaction(this.db, (trx) => trx.updateTable('instances').set({ url }).where('id', '=', id).execute());
  }

  /**
   * Removes every other instance that is dead and releases its operation and job
   * leases. Dead: its heartbeat is older than `deadAfterMs`, or (PostgreSQL) the
   * advisory lock it holds while alive is gone, which happens as soon as its process
   * dies, and its heartbeat is older than `lockGraceMs` (so that a live instance whose
   * lock connection merely dropped, say in a database restart, has a heartbeat's time
   * to take a new lock). On PostgreSQL this is one statement: two live instances
   * declaring the same one dead at once serialize on its row, and the second finds
   * nothing left to do.
   */
  async declareDead(me: string, limits: { deadAfterMs: number; lockGraceMs: number }, now: number): Promise<{ ids: string[]; released: Released }> {
    const { deadAfterMs, lockGraceMs } = limits;
    if (this.db.dialect === 'postgres') {
      const { rows } = await sql<{ kind: 'instance' | 'operation' | 'job'; id: string }>`
        WITH dead AS (
          DELETE FROM instances i WHERE i.id <> ${me}
            AND (i.heartbeat_at < ${this.dbNow()} - ${deadAfterMs} OR (i.lock_key IS NOT NULL AND i.heartbeat_at < ${this.dbNow()} - ${lockGraceMs} AND NOT EXISTS (
              SELECT 1 FROM pg_locks l
              WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
                AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                AND l.classid = ${INSTANCE_LOCK_NAMESPACE}::int::oid AND l.objid = i.lock_key::oid)))
          RETURNING i.id
        ), ops AS (
          UPDATE operations SET ${releasedLeaseColumns(now)}
          WHERE lease_owner IN (SELECT id FROM dead) RETURNING id
        ), jobs AS (
          DELETE FROM job_leases WHERE owner IN (SELECT id FROM dead) RETURNING name
        ), buys AS (
          UPDATE media_buys SET lease_owner = NULL, lease_until = NULL WHERE lease_owner IN (SELECT id FROM dead) RETURNING id
        ), outcomes AS (
          UPDATE media_buy_outcomes SET lease_owner = NULL, lease_until = NULL WHERE lease_owner IN (SELECT id FROM dead) RETURNING id
        )
        SELECT 'instance' AS kind, id FROM dead
        UNION ALL SELECT 'operation', id FROM ops
        UNION ALL SELECT 'job', name FROM jobs`.execute(this.db.kysely);
      const count = (kind: string) => rows.filter((r) => r.kind === kind).length;
      return { ids: rows.filter((r) => r.kind === 'instance').map((r) => r.id), released: { operations: count('operation'), jobs: count('job') } };
    }
    return inWriteTransaction(this.db, async (trx) => {
      const { rows } = await sql<{ id: string }>`
        DELETE FROM instances WHERE id <> ${me} AND heartbeat_at < ${this.dbNow()} - ${deadAfterMs} RETURNING id`.execute(trx);
      const ids = rows.map((r) => r.id);
      if (ids.length === 0) return { ids, released: { operations: 0, jobs: 0 } };
      const released = await this.releaseWhere(trx, sql`lease_owner IN (${sql.join(ids)})`, sql`owner IN (${sql.join(ids)})`, now);
      return { ids, released };
    });
  }

  /** A clean shutdown: our row goes and so do our leases, so nothing waits for them to expire. */
  async remove(id: string, now: number): Promise<Released> {
    return inWriteTransaction(this.db, async (trx) => {
      await trx.deleteFrom('instances').where('id', '=', id).execute();
      return this.releaseWhere(trx, sql`lease_owner = ${id}`, sql`owner = ${id}`, now);
    });
  }

  /**
   * Hands back leases of ours whose work failed for want of the database (the scheduler
   * notes them, src/engine/stranded-leases.ts), so the work is due again now rather than
   * when the lease runs out. Each only if it is still that exact lease (owner and epoch):
   * one taken since is left alone. Returns how many were handed back.
   */
  async releaseLeases(owner: string, leases: ReadonlyArray<{ id: string; epoch: number }>, now: number): Promise<number> {
    if (leases.length === 0) return 0;
    return inWriteTransaction(this.db, async (trx) => {
      let released = 0;
      for (const { id, epoch } of leases) {
        const res = await sql`UPDATE operations SET ${releasedLeaseColumns(now)}
          WHERE id = ${id} AND lease_owner = ${owner} AND lease_epoch = ${epoch}`.execute(trx);
        released += Number(res.numAffectedRows ?? 0);
      }
      return released;
    });
  }

  /**
   * Hands back the leases a claim of ours took whose answer never reached us (the connection
   * was cut while the server was not answering, and the server carried the statement out
   * later): the rows it leased are ours until exactly `leaseUntil`, and no one here is
   * working on them. Returns how many.
   */
  async releaseUnseenClaim(owner: string, leaseUntil: number, now: number): Promise<number> {
    const res = await inWriteTransaction(this.db, (trx) =>
      sql`UPDATE operations SET ${releasedLeaseColumns(now)} WHERE lease_owner = ${owner} AND lease_until = ${leaseUntil}`.execute(trx),
    );
    return Number(res.numAffectedRows ?? 0);
  }

  /** Every row with its heartbeat's age, oldest start first. */
  async list(): Promise<InstanceView[]> {
    return this.listIn(this.db.kysely);
  }

  /** Instances whose heartbeat is no older than `deadAfterMs`. */
  async countLive(deadAfterMs: number): Promise<number> {
    const row = await this.db.kysely
      .selectFrom('instances')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('heartbeat_at', '>=', sql<number>`${this.dbNow()} - ${deadAfterMs}`)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  private async listIn(conn: Tx): Promise<InstanceView[]> {
    const rows = await conn
      .selectFrom('instances')
      .selectAll()
      .select(sql<number>`${this.dbNow()} - heartbeat_at`.as('age_ms'))
      .orderBy('started_at')
      .orderBy('id')
      .execute();
    return rows.map((r) => ({ ...r, age_ms: Number(r.age_ms) }));
  }

  private async upsert(conn: Tx, me: NewInstance): Promise<void> {
    const now = this.dbNow();
    await conn
      .insertInto('instances')
      .values({ id: me.id, pid: me.pid, hostname: me.hostname, url: me.url ?? null, started_at: now, heartbeat_at: now, lock_key: me.lock_key ?? null })
      .onConflict((oc) =>
        oc.column('id').doUpdateSet({ heartbeat_at: now, ...(me.url ? { url: me.url } : {}), ...(me.lock_key !== undefined ? { lock_key: me.lock_key } : {}) }),
      )
      .execute();
  }

  private async releaseWhere(conn: Tx, operations: RawBuilder<unknown>, jobs: RawBuilder<unknown>, now: number): Promise<Released> {
    const ops = await sql`UPDATE operations SET ${releasedLeaseColumns(now)} WHERE ${operations}`.execute(conn);
    const held = await sql`DELETE FROM job_leases WHERE ${jobs}`.execute(conn);
    // A live media buy's timers and its governance outcomes are leased like operations (src/store/media-buys-repo.ts).
    await sql`UPDATE media_buys SET lease_owner = NULL, lease_until = NULL WHERE ${operations}`.execute(conn);
    await sql`UPDATE media_buy_outcomes SET lease_owner = NULL, lease_until = NULL WHERE ${operations}`.execute(conn);
    return { operations: Number(ops.numAffectedRows ?? 0), jobs: Number(held.numAffectedRows ?? 0) };
  }
}

/** No owner, no expiry, due now (a row without a timer keeps none); the epoch stays, to fence the old owner. */
function releasedLeaseColumns(now: number): RawBuilder<unknown> {
  return sql`lease_owner = NULL, lease_until = NULL,
    next_check_at = CASE WHEN next_check_at IS NOT NULL AND next_check_at > ${now} THEN ${now} ELSE next_check_at END`;
}
