/**
 * Writes notification rows straight into the outbox (through the notifications
 * repo, as other code that reports a change does), for store-level tests of
 * subscription delivery that need notifications without running operations.
 */
import type { Store } from '../../src/store/index.js';
import { newNotificationId } from '../../src/store/notifications-repo.js';
import { inWriteTransaction } from '../../src/store/tx.js';

export interface WrittenNotification {
  seq: number;
  id: string;
  type: string;
  operation_id: string | null;
  body: string;
}

/** One notification per entry, in order, in one transaction; returns them with their seqs. */
export async function writeNotifications(store: Store, tenantId: string, items: Array<{ type: string; operationId: string | null }>): Promise<WrittenNotification[]> {
  const rows = items.map((item) => {
    const id = newNotificationId();
    const createdAt = Date.now();
    const body = JSON.stringify({
      id,
      type: item.type,
      created_at: new Date(createdAt).toISOString(),
      tenant_id: tenantId,
      data: { operation: { id: item.operationId, type: 'create_media_buy', status: item.type.split('.')[1] }, event: { kind: 'transition' } },
    });
    return { id, tenant_id: tenantId, type: item.type, operation_id: item.operationId, created_at: createdAt, body };
  });
  const written = await inWriteTransaction(store.db, (trx) => store.notifications.insertIn(trx, rows));
  return written.map((n) => ({ seq: Number(n.seq), id: n.id, type: n.type, operation_id: n.operation_id, body: n.body }));
}
