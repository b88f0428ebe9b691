/**
 * A create_media_buy under the API's Idempotency-Key: the key is reserved in the
 * same commit that stores the operation (not in a commit of its own before it), so
 * the call still waits for one commit. Statements are tracked per transaction at the
 * driver of the orchestrator's SQLite connection. A repeat gets the first answer; a
 * concurrent one under the same key never makes a second operation.
 */
import { randomUUID } from 'node:crypto';
import SQLite from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';
import { toolCalls } from '../helpers/raw-calls.js';

/** The statements of every committed transaction, in commit order (all connections of this process). */
const committed: string[][] = [];
const open = new WeakMap<object, string[]>();
type Stmt = Record<'run' | 'all' | 'get', (...a: unknown[]) => unknown>;
const proto = (SQLite as unknown as { prototype: { prepare: (sql: string) => Stmt } }).prototype;
const originalPrepare = proto.prepare;
proto.prepare = function (this: object, text: string) {
  const stmt = originalPrepare.call(this, text);
  const db = this;
  for (const m of ['run', 'all', 'get'] as const) {
    const fn = stmt[m];
    if (typeof fn !== 'function') continue;
    stmt[m] = function (this: unknown, ...args: unknown[]) {
      if (/^\s*BEGIN\b/i.test(text)) open.set(db, []);
      else if (/^\s*COMMIT\b/i.test(text)) {
        const list = open.get(db);
        if (list) committed.push(list);
        open.delete(db);
      } else open.get(db)?.push(text);
      return fn.apply(this, args);
    };
  }
  return stmt;
};

let seller: SandboxSeller | undefined;
let orch: TestOrchestrator | undefined;

afterAll(async () => {
  proto.prepare = originalPrepare;
  await orch?.close();
  await seller?.close();
});

const touches = (tx: string[], table: string) => tx.some((s) => new RegExp(`^\\s*insert into "${table}"`, 'i').test(s));

describe('a keyed create_media_buy', () => {
  it('reserves the key in the commit that stores the operation; the repeat replays; a concurrent one makes no second buy', { timeout: 60_000 }, async () => {
    let committedAtArrival: string[][] | undefined;
    seller = await startSandboxSeller({
      onMcpRequest: async (raw) => {
        if (toolCalls([raw], 'create_media_buy').length === 1 && !committedAtArrival) committedAtArrival = committed.map((t) => [...t]);
      },
    });
    orch = await startOrchestrator();
    const agentId = await orch.registerAgent({ url: seller.url });
    const key = `k-${randomUUID()}`;
    const body = { agent_id: agentId, request: mediaBuyRequest('sandbox_instant') };
    const from = committed.length;
    const created = await orch.api('POST', '/v1/media-buys', body, { 'idempotency-key': key });
    expect(created.status).toBe(202);
    expect(created.body.status).toBe('completed');

    // When the seller got the bytes: the reservation and the operation had been committed, together.
    const before = committedAtArrival!.slice(from);
    const reservations = before.filter((t) => touches(t, 'api_idempotency'));
    expect(reservations).toHaveLength(1);
    expect(touches(reservations[0]!, 'operations')).toBe(true);
    expect(before.filter((t) => touches(t, 'operations'))).toHaveLength(1);

    const stored = await orch.app.store.db.kysely.selectFrom('api_idempotency').selectAll().where('key', '=', key).executeTakeFirstOrThrow();
    expect(stored.status_code).toBe(202);
    expect(JSON.parse(stored.response_body!).id).toBe(created.body.id);

    const again = await orch.api('POST', '/v1/media-buys', body, { 'idempotency-key': key });
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(created.body.id);

    // Two at once under a new key: one operation; the other answer is its replay or "in progress".
    const key2 = `k-${randomUUID()}`;
    const both = await Promise.all([0, 1].map(() => orch!.api('POST', '/v1/media-buys', body, { 'idempotency-key': key2 })));
    const statuses = both.map((r) => r.status).sort();
    expect(statuses[0]).toBe(202);
    expect([202, 409]).toContain(statuses[1]);
    const ids = new Set(both.filter((r) => r.status === 202).map((r) => r.body.id));
    expect(ids.size).toBe(1);
    const mine = await orch.app.store.db.kysely.selectFrom('operations').select('id').where('id', 'in', [...ids]).execute();
    expect(mine).toHaveLength(1);

    // A different body under a used key is refused and creates nothing.
    const count = async () => Number((await orch!.app.store.db.kysely.selectFrom('operations').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    const n = await count();
    const other = await orch.api('POST', '/v1/media-buys', { ...body, request: { ...body.request, po_number: 'other' } }, { 'idempotency-key': key });
    expect(other.status).toBe(409);
    expect(await count()).toBe(n);
  });

  it('an invalid request under a key leaves no reservation behind', { timeout: 30_000 }, async () => {
    const key = `k-${randomUUID()}`;
    const bad = await orch!.api('POST', '/v1/media-buys', { agent_id: 'no-such-agent', request: mediaBuyRequest('sandbox_instant') }, { 'idempotency-key': key });
    expect(bad.status).toBe(404);
    const left = await orch!.app.store.db.kysely.selectFrom('api_idempotency').select('key').where('key', '=', key).execute();
    expect(left).toEqual([]);
  });
});
