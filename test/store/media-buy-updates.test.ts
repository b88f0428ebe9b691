/**
 * A pause and a resume whose replies state no status, applied to the buy in the commit that
 * completes each (src/engine/media-buys/update-apply.ts through the BuyRecorder hook), on
 * SQLite and (with TEST_DATABASE_URL) PostgreSQL: the pause is taken from the request, the
 * resume goes back to the status the buy's history had before the pause.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuyRecorder } from '../../src/engine/media-buys/buy-recorder.js';
import type { Store } from '../../src/store/index.js';
import { newOperationRow } from '../../src/store/operation-row.js';
import { dialects, type TestDatabase } from '../helpers/databases.js';
import { closeSellerStore, openSellerStore } from '../helpers/seller-store.js';

const log = pino({ level: 'silent' });

describe.each(dialects)('updates without a stated status on $name', ({ make }) => {
  let database: TestDatabase;
  let store: Store;
  let tenantId: string;
  let agentId: string;

  beforeAll(async () => {
    database = await make();
    ({ store, tenantId, agentId } = await openSellerStore(database));
    store.operations.addWriteHook(new BuyRecorder({ store, tracking: { graceMs: 60_000, statusIntervalMs: 600_000 }, random: () => 0, log }).onOperationWrite);
  });
  afterAll(async () => closeSellerStore(store, database));

  /** An operation inserted as sent, then completed with `result` (as any path completes it). */
  async function complete(id: string, type: string, request: Record<string, unknown>, result: Record<string, unknown>, parentId: string | null = null) {
    const now = Date.now();
    const op = newOperationRow(
      { id: `${id}-${database.name}`, tenant_id: tenantId, agent_id: agentId, type, idempotency_key: `key-${id}-${database.name}-0123456789`, request_body: JSON.stringify(request), created_at: now },
      { status: 'calling_adcp', parent_id: parentId },
    );
    await store.operations.insert(op, { source: 'user', kind: 'created', to: 'requested' });
    await store.operations.mutate(op.id, null, (row) => ({
      patch: { status: 'completed', result: JSON.stringify(result), completed_at: now },
      events: [{ source: 'call', kind: 'transition', from: row.status, to: 'completed' }],
      value: null,
    }));
    return op.id;
  }

  it('a pause is paused, and a resume goes back to the status before it', async () => {
    const createId = await complete('create', 'create_media_buy', { start_time: 'asap', end_time: new Date(Date.now() + 3_600_000).toISOString(), packages: [] }, { media_buy_id: 'mb_1', status: 'active', packages: [] });
    const buy = (await store.mediaBuys.byOperation(createId))!;
    expect(buy.status).toBe('active');

    await complete('pause', 'update_media_buy', { media_buy_id: 'mb_1', paused: true }, { media_buy_id: 'mb_1' }, createId);
    expect((await store.mediaBuys.get(buy.id))!.status).toBe('paused');

    await complete('resume', 'update_media_buy', { media_buy_id: 'mb_1', paused: false }, { media_buy_id: 'mb_1', revision: 3 }, createId);
    const resumed = (await store.mediaBuys.get(buy.id))!;
    expect(resumed).toMatchObject({ status: 'active', revision: 3 });
    const changes = (await store.mediaBuys.events(buy.id)).filter((e) => e.kind === 'status_changed').map((e) => [e.from_status, e.to_status, e.source]);
    expect(changes).toEqual([
      [null, 'active', 'call'],
      ['active', 'paused', 'call'],
      ['paused', 'active', 'call'],
    ]);
    // Each change was told, in the commit of its update.
    const told = await store.db.kysely.selectFrom('notifications').select('type').where('operation_id', '=', buy.id).orderBy('seq').execute();
    expect(told.map((n) => n.type)).toEqual(expect.arrayContaining(['media_buy.paused', 'media_buy.resumed']));
  });
});
