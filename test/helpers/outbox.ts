/**
 * Writes notification rows straight into the outbox, for store-level tests of
 * subscription delivery that need notifications without running operations.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Store } from '../../src/store/index.js';
import { inWriteTransaction } from '../../src/store/tx.js';

// TODO(notifications): until migration 007 lands, the table is made here in the shape the interface gives.
export async function ensureOutbox(store: Store): Promise<void> {
  const pg = store.db.dialect === 'postgres';
  await sql
    .raw(
      `CREATE TABLE IF NOT EXISTS notifications (
        seq ${pg ? 'BIGSERIAL PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT'},
        id TEXT UNIQUE NOT NULL, tenant_id TEXT NOT NULL, type TEXT NOT NULL, operation_id TEXT,
        created_at BIGINT NOT NULL, body TEXT NOT NULL)`,
    )
    .execute(store.db.kysely);
}

export interface WrittenNotification {
  seq: number;
  id: string;
  type: string;
  operation_id: string | null;
  body: string;
}

/** One notification per entry, in order, in one transaction; returns them with their seqs. */
export async function writeNotifications(store: Store, tenantId: string, items: Array<{ type: string; operationId: string | null }>): Promise<WrittenNotification[]> {
  return inWriteTransaction(store.db, async (trx) => {
    const out: WrittenNotification[] = [];
    for (const item of items) {
      const id = `ntf_${randomUUID()}`;
      const createdAt = Date.now();
      const body = JSON.stringify({
        id,
        type: item.type,
        created_at: new Date(createdAt).toISOString(),
        tenant_id: tenantId,
        data: { operation: { id: item.operationId, type: 'create_media_buy', status: item.type.split('.')[1] }, event: { kind: 'transition' } },
      });
      const { rows } = await sql<{ seq: number }>`
        INSERT INTO notifications (id, tenant_id, type, operation_id, created_at, body)
        VALUES (${id}, ${tenantId}, ${item.type}, ${item.operationId}, ${createdAt}, ${body}) RETURNING seq`.execute(trx);
      out.push({ seq: Number(rows[0]!.seq), id, type: item.type, operation_id: item.operationId, body });
    }
    return out;
  });
}
