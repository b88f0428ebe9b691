/**
 * Job leases: a named piece of periodic work (e.g. reconciling one agent) that at
 * most one instance holds at a time. Claiming is one upsert, atomic on both
 * dialects: it inserts the lease, or takes it over only when it has expired or is
 * already ours, and tells us through RETURNING whether we got it.
 */
import { sql } from 'kysely';
import type { Db } from './db.js';

export class JobLeasesRepo {
  constructor(private readonly db: Db) {}

  /** True when `owner` now holds `name` until `until` (epoch ms). */
  async claim(name: string, owner: string, now: number, until: number): Promise<boolean> {
    // ON CONFLICT … DO UPDATE … WHERE is the same syntax in SQLite (3.24+) and PostgreSQL;
    // a row is returned only if it was inserted or the WHERE let the update through.
    const { rows } = await sql<{ name: string }>`
      INSERT INTO job_leases (name, owner, lease_until) VALUES (${name}, ${owner}, ${until})
      ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until
      WHERE job_leases.lease_until <= ${now} OR job_leases.owner = excluded.owner
      RETURNING name`.execute(this.db.kysely);
    return rows.length === 1;
  }

  /** Moves our lease's expiry (e.g. keep the slot until the next period); false if it is no longer ours. */
  async extend(name: string, owner: string, until: number): Promise<boolean> {
    const res = await this.db.kysely
      .updateTable('job_leases')
      .set({ lease_until: until })
      .where('name', '=', name)
      .where('owner', '=', owner)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Gives the lease up at once, if it is still ours. */
  async release(name: string, owner: string): Promise<void> {
    await this.db.kysely.deleteFrom('job_leases').where('name', '=', name).where('owner', '=', owner).execute();
  }

  async get(name: string): Promise<{ owner: string; lease_until: number } | undefined> {
    return this.db.kysely.selectFrom('job_leases').select(['owner', 'lease_until']).where('name', '=', name).executeTakeFirst();
  }
}
