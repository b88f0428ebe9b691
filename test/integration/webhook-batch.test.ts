/**
 * Webhook deliveries that arrive together are stored and applied together
 * (src/engine/webhook-batch.ts): one grouped transaction, one statement per table.
 * Driven through the engine's one entry (`WebhookIngest.ingest`, as the receiver calls
 * it after authenticating), several in the same turn of the event loop, so they share
 * a group commit. Each must end exactly as it would alone: applied once, stored
 * applied with its outcome, duplicates told apart, the buy of a completed create made.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { IngestOutcome, PendingNonce } from '../../src/engine/webhook-ingest.js';
import { parseDelivery } from '../../src/webhooks/parse-delivery.js';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';
import { createWebhookOperation, type WebhookOperation } from '../helpers/webhook-operation.js';

describe('webhook deliveries applied in batches (SQLite)', () => {
  let orch: TestOrchestrator;
  let agentId: string;

  beforeAll(async () => {
    orch = await startOrchestrator();
    agentId = await orch.registerAgent({ url: 'http://127.0.0.1:9/mcp' });
  });
  afterAll(async () => orch?.close());

  const newOps = (n: number) => Promise.all(Array.from({ length: n }, () => createWebhookOperation(orch, agentId, 'hmac')));

  function body(op: WebhookOperation, status: string, at: number, key = `whk_${randomBytes(8).toString('hex')}`): string {
    return JSON.stringify({
      idempotency_key: key,
      operation_id: op.id,
      task_id: op.taskId,
      task_type: 'create_media_buy',
      status,
      timestamp: new Date(at).toISOString(),
      ...(status === 'completed' ? { result: { media_buy_id: `mb_${op.id.slice(0, 8)}`, packages: [] } } : { message: `at ${at}` }),
    });
  }

  /** What the receiver hands the engine for `text` at `op`'s URL, after authenticating it. */
  async function ingest(op: WebhookOperation, text: string): Promise<IngestOutcome> {
    const target = await orch.app.webhookIngest.target(op.token);
    const parsed = parseDelivery(Buffer.from(text));
    if (!target || !parsed.ok) throw new Error('test delivery did not resolve or parse');
    return orch.app.webhookIngest.ingest({ operation: target, claims: parsed.payload, fingerprint: parsed.fingerprint, text: parsed.text });
  }

  /** Ingests all of them from the same turn: targets read first, then every `ingest` queued at once (with the RFC 9421 nonce given). */
  async function together(list: Array<[WebhookOperation, string, PendingNonce?]>): Promise<IngestOutcome[]> {
    const prepared = await Promise.all(
      list.map(async ([op, text, nonce]) => {
        const target = await orch.app.webhookIngest.target(op.token);
        const parsed = parseDelivery(Buffer.from(text));
        if (!target || !parsed.ok) throw new Error('test delivery did not resolve or parse');
        return { operation: target, claims: parsed.payload, fingerprint: parsed.fingerprint, text: parsed.text, nonce };
      }),
    );
    return Promise.all(prepared.map((d) => orch.app.webhookIngest.ingest(d)));
  }

  const db = () => orch.app.store.db.kysely;
  const statusOf = async (id: string) => (await db().selectFrom('operations').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
  const deliveriesOf = (id: string) => db().selectFrom('webhook_deliveries').select(['idempotency_key', 'state', 'outcome']).where('operation_id', '=', id).execute();
  const transitionsOf = async (id: string) =>
    (await db().selectFrom('operation_events').select(['kind', 'from_status', 'to_status']).where('operation_id', '=', id).where('kind', '=', 'transition').orderBy('id').execute()).map(
      (e) => `${e.from_status}->${e.to_status}`,
    );

  it('stores and applies deliveries for many operations in one batch, two for one operation in order, and makes the buy of a completed create', async () => {
    const ops = await newOps(5);
    const batches = vi.spyOn(orch.app.store.operations, 'mutateManyIn');
    const buysTogether = vi.spyOn(orch.app.store.mediaBuys, 'insertManyIn');
    const t = Date.now() - 10_000;
    const outcomes = await together([
      [ops[0]!, body(ops[0]!, 'working', t)],
      [ops[1]!, body(ops[1]!, 'working', t)],
      [ops[2]!, body(ops[2]!, 'completed', t)],
      [ops[3]!, body(ops[3]!, 'working', t)],
      // Newer than the first delivery to ops[3]: applied after it, from the row it left.
      [ops[3]!, body(ops[3]!, 'completed', t + 1000)],
      [ops[4]!, body(ops[4]!, 'input-required', t)],
    ]);

    expect(outcomes).toEqual([
      { kind: 'applied', outcome: 'transition' },
      { kind: 'applied', outcome: 'transition' },
      { kind: 'applied', outcome: 'transition' },
      { kind: 'applied', outcome: 'transition' },
      { kind: 'applied', outcome: 'transition' },
      { kind: 'applied', outcome: 'transition' },
    ]);
    // One batch of the first delivery of each operation that asks no person; the one asking a person and
    // ops[3]'s second went their own way, after it, in the same commit.
    expect(batches.mock.calls.map((c) => c[1].length)).toEqual([4]);
    batches.mockRestore();
    // ops[2]'s buy made by the batch; ops[3]'s by its second delivery's own job.
    expect(buysTogether.mock.calls.map((c) => c[1].length)).toEqual([1]);
    buysTogether.mockRestore();
    expect(await Promise.all(ops.map((o) => statusOf(o.id)))).toEqual(['working', 'working', 'completed', 'completed', 'input-required']);
    expect(await transitionsOf(ops[3]!.id)).toEqual(['submitted->working', 'working->completed']);
    for (const op of ops) {
      const rows = await deliveriesOf(op.id);
      expect(rows.every((r) => r.state === 'applied' && r.outcome === 'transition')).toBe(true);
      expect(rows).toHaveLength(op === ops[3] ? 2 : 1);
    }
    const buys = await db().selectFrom('media_buys').select(['id', 'operation_id', 'media_buy_id']).where('operation_id', 'in', [ops[2]!.id, ops[3]!.id]).orderBy('media_buy_id').execute();
    expect(buys.map((b) => b.operation_id).sort()).toEqual([ops[2]!.id, ops[3]!.id].sort());
    // Each buy with its own first events and the notification they raise, as one buy made alone has.
    for (const buy of buys) {
      const events = await db().selectFrom('media_buy_events').select(['kind', 'to_status']).where('buy_id', '=', buy.id).orderBy('id').execute();
      expect(events).toEqual([
        { kind: 'created', to_status: 'pending_start' },
        { kind: 'status_changed', to_status: 'pending_start' },
      ]);
      const told = await db().selectFrom('notifications').select('type').where('operation_id', '=', buy.id).execute();
      expect(told.map((n) => n.type)).toEqual(['media_buy.created']);
    }
    const notified = await db().selectFrom('notifications').select(['operation_id', 'type']).where('operation_id', 'in', ops.map((o) => o.id)).orderBy('seq').execute();
    expect(notified.filter((n) => n.type === 'operation.completed').map((n) => n.operation_id).sort()).toEqual([ops[2]!.id, ops[3]!.id].sort());
    expect(notified.filter((n) => n.type === 'operation.input_required').map((n) => n.operation_id)).toEqual([ops[4]!.id]);
  });

  it("a batch's notifications (its changes' own and the buys they make) reach a live reader from the committed changes, in seq order, with no database read", async () => {
    const ops = await newOps(4);
    const feed = orch.app.live.feed;
    const seen: Array<{ seq: number; type: string; operation_id: string | null }> = [];
    // A reader caught up to now (its first look reads the table once: that read is not the batch's).
    const sub = feed.subscribe(orch.tenantId, await feed.startingPoint(), { deliver: async (rows) => void seen.push(...rows.map((r) => ({ seq: r.seq, type: r.type, operation_id: r.operation_id }))), end: () => undefined });
    await new Promise((r) => setTimeout(r, 50));
    const reads = feed.counts.databaseReads;
    const t = Date.now() - 10_000;
    const outcomes = await together(ops.map((op) => [op, body(op, 'completed', t)] as [WebhookOperation, string]));
    expect(outcomes.every((o) => o.kind === 'applied')).toBe(true);
    await new Promise((r) => setTimeout(r, 50));
    sub.close();
    // Per operation: completed, then its buy made.
    expect(seen.map((n) => n.type)).toEqual(ops.flatMap(() => ['operation.completed', 'media_buy.created']));
    expect(seen.map((n) => n.seq)).toEqual([...seen.map((n) => n.seq)].sort((a, b) => a - b));
    expect(seen.filter((n) => n.type === 'operation.completed').map((n) => n.operation_id)).toEqual(ops.map((o) => o.id));
    expect(feed.counts.databaseReads - reads).toBe(0);
  });

  it('a retry of an applied delivery among new ones: the new ones are applied once, the retry is a duplicate, nothing twice', async () => {
    const ops = await newOps(3);
    const t = Date.now() - 10_000;
    const first = body(ops[0]!, 'working', t);
    expect(await ingest(ops[0]!, first)).toEqual({ kind: 'applied', outcome: 'transition' });

    const outcomes = await together([
      [ops[1]!, body(ops[1]!, 'working', t)],
      [ops[0]!, first],
      [ops[2]!, body(ops[2]!, 'working', t)],
    ]);
    expect(outcomes).toEqual([{ kind: 'applied', outcome: 'transition' }, { kind: 'duplicate', refused: false }, { kind: 'applied', outcome: 'transition' }]);
    for (const op of ops) {
      expect(await transitionsOf(op.id)).toEqual(['submitted->working']);
      expect(await deliveriesOf(op.id)).toHaveLength(1);
    }
  });

  it('the same new delivery twice in one batch: applied once, the other copy a duplicate; the same key with another body a mismatch', async () => {
    const ops = await newOps(3);
    const t = Date.now() - 10_000;
    const twice = body(ops[0]!, 'completed', t, 'whk_same_delivery_twice');
    const key = 'whk_same_key_other_body';
    const outcomes = await together([
      [ops[0]!, twice],
      [ops[1]!, body(ops[1]!, 'working', t, key)],
      [ops[0]!, twice],
      [ops[1]!, body(ops[1]!, 'completed', t + 1000, key)],
      [ops[2]!, body(ops[2]!, 'working', t)],
    ]);
    expect(outcomes).toEqual([
      { kind: 'applied', outcome: 'transition' },
      { kind: 'applied', outcome: 'transition' },
      { kind: 'duplicate', refused: false },
      { kind: 'payload_mismatch' },
      { kind: 'applied', outcome: 'transition' },
    ]);
    expect(await Promise.all(ops.map((o) => statusOf(o.id)))).toEqual(['completed', 'working', 'working']);
    expect(await transitionsOf(ops[0]!.id)).toEqual(['submitted->completed']);
    expect(await deliveriesOf(ops[0]!.id)).toHaveLength(1);
    expect(await deliveriesOf(ops[1]!.id)).toEqual([{ idempotency_key: key, state: 'applied', outcome: 'transition' }]);
  });

  describe('with RFC 9421 nonces (recorded in the same batch, one statement)', () => {
    const keyid = `key-${randomBytes(4).toString('hex')}`;
    const nonce = (n: string): PendingNonce => ({ keyid, nonce: n, expiresAtMs: Date.now() + 300_000, nowMs: Date.now() });
    const nonceRows = () => db().selectFrom('webhook_nonces').select('nonce').where('keyid', '=', keyid).orderBy('nonce').execute();
    const counted = async () => Number((await db().selectFrom('webhook_nonce_counts').select((eb) => eb.fn.sum<number>('n').as('n')).where('keyid', '=', keyid).executeTakeFirst())?.n ?? 0);

    it('fresh nonces: every delivery applied, every nonce recorded and counted; a nonce used twice in the batch refuses the second; a replay among them is refused alone', async () => {
      const ops = await newOps(5);
      const t = Date.now() - 10_000;
      const batches = vi.spyOn(orch.app.store.nonces, 'checkAndInsertManyOn');
      const first = await together([
        [ops[0]!, body(ops[0]!, 'working', t), nonce('n-0')],
        [ops[1]!, body(ops[1]!, 'working', t), nonce('n-1')],
        [ops[2]!, body(ops[2]!, 'working', t), nonce('n-2')],
        [ops[3]!, body(ops[3]!, 'working', t), nonce('n-2')],
      ]);
      expect(batches).toHaveBeenCalledTimes(1);
      batches.mockRestore();
      expect(first).toEqual([
        { kind: 'applied', outcome: 'transition' },
        { kind: 'applied', outcome: 'transition' },
        { kind: 'applied', outcome: 'transition' },
        { kind: 'refused', reason: 'webhook_signature_replayed' },
      ]);
      expect((await nonceRows()).map((r) => r.nonce)).toEqual(['n-0', 'n-1', 'n-2']);
      expect(await counted()).toBe(3);
      expect(await statusOf(ops[3]!.id)).toBe('submitted');
      expect(await deliveriesOf(ops[3]!.id)).toEqual([]);

      // A replay of a recorded nonce beside fresh ones: refused alone, nothing of it written.
      const second = await together([
        [ops[3]!, body(ops[3]!, 'working', t), nonce('n-3')],
        [ops[4]!, body(ops[4]!, 'working', t), nonce('n-1')],
        [ops[0]!, body(ops[0]!, 'completed', t + 1000), nonce('n-4')],
      ]);
      expect(second).toEqual([
        { kind: 'applied', outcome: 'transition' },
        { kind: 'refused', reason: 'webhook_signature_replayed' },
        { kind: 'applied', outcome: 'transition' },
      ]);
      expect((await nonceRows()).map((r) => r.nonce)).toEqual(['n-0', 'n-1', 'n-2', 'n-3', 'n-4']);
      expect(await counted()).toBe(5);
      expect(await Promise.all(ops.map((o) => statusOf(o.id)))).toEqual(['completed', 'working', 'working', 'working', 'submitted']);
    });

    it('a batch undone (a retry among them) leaves no nonce behind it twice: each delivery then records its own', async () => {
      const ops = await newOps(3);
      const t = Date.now() - 10_000;
      const retried = body(ops[0]!, 'working', t);
      expect((await together([[ops[0]!, retried, nonce('u-0')]]))[0]).toEqual({ kind: 'applied', outcome: 'transition' });
      const before = await counted();
      const outcomes = await together([
        [ops[1]!, body(ops[1]!, 'working', t), nonce('u-1')],
        [ops[0]!, retried, nonce('u-2')],
        [ops[2]!, body(ops[2]!, 'working', t), nonce('u-3')],
      ]);
      expect(outcomes).toEqual([{ kind: 'applied', outcome: 'transition' }, { kind: 'duplicate', refused: false }, { kind: 'applied', outcome: 'transition' }]);
      expect((await nonceRows()).map((r) => r.nonce).filter((n) => n.startsWith('u-'))).toEqual(['u-0', 'u-1', 'u-2', 'u-3']);
      expect(await counted()).toBe(before + 3);
    });
  });
});
