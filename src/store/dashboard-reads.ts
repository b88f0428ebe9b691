/**
 * Read-only queries the dashboard needs beyond the repositories' own: finding an
 * operation by any of the ids people hold, and counting what waits for a person.
 * Each is shaped to use an existing index (see 001-initial and 006-input-requests).
 */
import type { Db } from './db.js';
import type { OperationRow } from './operations-repo.js';

export class DashboardReads {
  constructor(private readonly db: Db) {}

  /**
   * Operations of the tenant whose id, seller task id or idempotency key is `term`,
   * newest first. Task ids and keys are unique per agent, so they are looked up
   * through the tenant's agents, on the (agent_id, …) indexes.
   */
  async search(tenantId: string, term: string, limit = 50): Promise<OperationRow[]> {
    const k = this.db.kysely;
    const agents = k.selectFrom('agents').select('id').where('tenant_id', '=', tenantId);
    const [byId, byTask, byKey] = await Promise.all([
      k.selectFrom('operations').selectAll().where('id', '=', term).where('tenant_id', '=', tenantId).execute(),
      k.selectFrom('operations').selectAll().where('agent_id', 'in', agents).where('task_id', '=', term).limit(limit).execute(),
      k.selectFrom('operations').selectAll().where('agent_id', 'in', agents).where('idempotency_key', '=', term).limit(limit).execute(),
    ]);
    const seen = new Map<string, OperationRow>();
    for (const row of [...byId, ...byTask, ...byKey]) if (row.tenant_id === tenantId) seen.set(row.id, row);
    return [...seen.values()].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1)).slice(0, limit);
  }

  /** What waits for a person, oldest first (the inbox). */
  async waiting(tenantId: string, limit: number): Promise<OperationRow[]> {
    return this.db.kysely
      .selectFrom('operations')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('needs_input', '=', 1)
      .orderBy('created_at')
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  /** How many operations wait for a person (the inbox's size). */
  async countWaiting(tenantId: string): Promise<number> {
    const row = await this.db.kysely
      .selectFrom('operations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenantId)
      .where('needs_input', '=', 1)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }
}
