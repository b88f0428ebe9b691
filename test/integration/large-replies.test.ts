/**
 * Large replies through the whole orchestrator, over real HTTP on loopback: an 8 MB
 * `get_products` answer below the cap is stored once (the notifications that report it
 * carry a marker and the operation's route instead of a copy), processing it never
 * blocks the event loop for long, and a buy at another seller, sent meanwhile, goes
 * through untouched. Above the cap, the call ends `reply_too_large`: a read fails, a
 * mutation waits for a person, and nothing is sent again.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { tempSqlite } from '../helpers/databases.js';
import { startHostileSeller, type HostileSeller } from '../helpers/hostile-seller.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';

const REPLY = { bytes: 8_000_000 };

let hostile: HostileSeller | undefined;
let other: SandboxSeller | undefined;
let orch: TestOrchestrator | undefined;
afterEach(async () => {
  await orch?.close();
  await hostile?.close();
  await other?.close();
  orch = hostile = other = undefined;
});

/** Resolves when the operation ends (from the change bus: no API read that would itself cost a pass over the reply). */
function ended(o: TestOrchestrator, id: () => string): Promise<string> {
  return new Promise((resolve) => {
    const stop = o.app.bus.subscribe((change) => {
      if (change.operation.id === id() && ['completed', 'failed', 'unknown'].includes(change.operation.status)) {
        stop();
        resolve(change.operation.status);
      }
    });
  });
}

/** Text sizes in bytes of what the database keeps about one operation. */
async function storedSizes(o: TestOrchestrator, id: string) {
  const db = o.app.store.db.kysely;
  const op = await db.selectFrom('operations').select(['result', 'request_body', 'error']).where('id', '=', id).executeTakeFirstOrThrow();
  const events = await db.selectFrom('operation_events').select(['detail']).where('operation_id', '=', id).execute();
  const notifications = await db.selectFrom('notifications').select(['type', 'body']).where('operation_id', '=', id).execute();
  const size = (t: string | null) => (t === null ? 0 : Buffer.byteLength(t));
  return {
    result: size(op.result),
    events: events.reduce((n, e) => n + size(e.detail), 0),
    notifications: notifications.map((n) => ({ type: n.type, bytes: size(n.body), body: JSON.parse(n.body) })),
  };
}

describe('an 8 MB reply below the cap', () => {
  // One retry: the loop's delay is timed in a process that shares two cores with the other
  // test files, and one CI run saw a single 258 ms stall against a 215 ms bound (a descheduled
  // process or a GC counts as a blocked loop). Doing the reply's passes in one task again
  // would block it on every attempt.
  it('is stored once, bounded in notifications, never blocks the loop for long, and leaves another seller alone', { retry: 1 }, async () => {
    hostile = await startHostileSeller();
    hostile.set('get_products', REPLY);
    other = await startSandboxSeller();
    orch = await startOrchestrator({
      env: { ADCP_ORCH_MAX_REPLY_BYTES: String(16 * 1024 * 1024), ADCP_ORCH_CALL_TIMEOUT_MS: '3000', ADCP_ORCH_SYNC_WAIT_MS: '0' },
    });
    const big = await orch.registerAgent({ name: 'big', url: hostile.mcpUrl });
    const small = await orch.registerAgent({ name: 'small', url: other.url });

    // The floor: the longer of the two steps no design can split, timed on this machine just
    // before and just after (the load of a shared machine comes and goes).
    const before = await floorOf(REPLY.bytes);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    let id = '';
    const end = ended(orch, () => id);
    id = (await orch.api('POST', '/v1/operations', { agent_id: big, task: 'get_products', params: { buying_mode: 'brief', brief: 'everything' }, webhook: 'none' })).body.id;
    // Buys at the other seller while the reply arrives and is processed.
    const buys: string[] = [];
    for (let i = 0; i < 3; i++) {
      buys.push((await orch.api('POST', '/v1/media-buys', { agent_id: small, request: mediaBuyRequest('sandbox_instant'), webhook: 'none' })).body.id);
    }
    expect(await end).toBe('completed');
    const bought = await Promise.all(buys.map((b) => waitForStatus(orch!, b, ['completed', 'failed', 'unknown'])));
    delay.disable();
    const after = await floorOf(REPLY.bytes);
    const floor = { parseMs: Math.max(before.parseMs, after.parseMs), writeMs: Math.max(before.writeMs, after.writeMs) };
    const floorMs = Math.max(floor.parseMs, floor.writeMs);

    const p99 = delay.percentile(99) / 1e6;
    // 100 ms, as long as the machine can do one step in a third of that; else three times the
    // longer step (GC, and a shared machine's load coming and going, land on top of it). The
    // reply's passes all in one task, as before (parse, serialise, write, then the
    // notification's parse, serialise and write again), are over that either way.
    const bound = Math.max(100, 3 * floorMs);
    const figures = `p99 ${p99.toFixed(0)} ms, max ${(delay.max / 1e6).toFixed(0)} ms; one parse ${floor.parseMs.toFixed(0)} ms, one durable write ${floor.writeMs.toFixed(0)} ms`;
    console.log(`8 MB reply, event-loop delay while it is processed: ${figures}`);
    expect(p99, `event-loop delay: ${figures}`).toBeLessThan(bound);
    for (const buy of bought) {
      expect(buy.status).toBe('completed');
      expect(buy.events.filter((e: any) => e.kind === 'send_failed')).toEqual([]);
    }

    // Stored once: on the operation. Its notifications and events carry no copy.
    const sizes = await storedSizes(orch, id);
    expect(sizes.result).toBeGreaterThan(REPLY.bytes);
    expect(sizes.events).toBeLessThan(4_096);
    expect(sizes.notifications.map((n) => n.type)).toEqual(['operation.created', 'operation.completed']);
    for (const n of sizes.notifications) expect(n.bytes).toBeLessThan(4_096);
    const completed = sizes.notifications[1]!.body;
    expect(completed.data.operation.result).toEqual({ $omitted: { bytes: sizes.result, href: `/v1/operations/${id}` } });
    // ... and read whole from the API.
    const shown = await orch.api('GET', completed.data.operation.result.$omitted.href);
    expect(shown.body.result.products.length).toBeGreaterThan(10_000);
    expect(shown.body.status).toBe('completed');
  });
});

describe('a reply past the cap', () => {
  async function setUp(protocol: 'mcp' | 'a2a') {
    hostile = await startHostileSeller();
    orch = await startOrchestrator({ env: { ADCP_ORCH_MAX_REPLY_BYTES: String(256 * 1024) } });
    const agentId = await orch.registerAgent({ url: protocol === 'mcp' ? hostile.mcpUrl : hostile.a2aUrl, protocol });
    return { hostile, orch, agentId };
  }

  it.each(['mcp', 'a2a'] as const)('fails a read with reply_too_large, over %s', async (protocol) => {
    const { hostile, orch, agentId } = await setUp(protocol);
    hostile.set('get_products', REPLY);
    const op = (await orch.api('POST', '/v1/operations', { agent_id: agentId, task: 'get_products', params: { buying_mode: 'brief', brief: 'x' }, webhook: 'none' })).body;
    const done = await waitForStatus(orch, op.id, ['failed', 'completed']);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'reply_too_large', message: expect.stringMatching(/larger than 262144 bytes/) });
    expect(done.result).toBeNull();
    expect(hostile.cutReplies).toHaveLength(1); // hung up on mid-reply
    // Asked once (beside the capabilities asked at registration), not asked again.
    expect(hostile.calls.filter((c) => c.tool !== 'get_adcp_capabilities')).toHaveLength(1);
  });

  it('leaves a mutation unknown and stalled for a person, saying the seller may have acted, and never resends it', async () => {
    const { hostile, orch, agentId } = await setUp('mcp');
    hostile.set('create_media_buy', REPLY);
    const op = (await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_instant'), webhook: 'none' })).body;
    const done = await waitForStatus(orch, op.id, ['unknown', 'failed', 'completed']);
    expect(done).toMatchObject({ status: 'unknown', stalled: true, next_check_at: null, error: { code: 'reply_too_large' } });
    expect(done.stalled_reason).toMatch(/may have acted on the request.*Check at the seller; nothing is resent automatically/);
    expect(done.events.map((e: any) => e.kind)).toEqual(['created', 'transition', 'transition', 'stalled']);
    // No timer is left on the row, so nothing will send it again.
    const row = await orch.app.store.operations.get(op.id);
    expect(row).toMatchObject({ next_check_at: null, check_kind: null, lease_owner: null });
    expect(hostile.calls.map((c) => c.tool)).toEqual(['get_adcp_capabilities', 'create_media_buy']);
  });
});

/**
 * The two steps of taking in a reply that are one task each whatever the design, timed
 * here and now (on an idle machine both are a few tens of ms for 8 MB; on a loaded one
 * they are what any task can be held to): reading the reply from a stream of 64 KiB
 * chunks, as a transport gets it, decoded and parsed; and one durable write of its
 * text (SQLite, WAL, synchronous=FULL, as the store runs).
 */
async function floorOf(bytes: number): Promise<{ parseMs: number; writeMs: number }> {
  const text = JSON.stringify({ products: Array.from({ length: Math.ceil(bytes / 700) }, (_, i) => ({ product_id: `p_${i}`, description: 'x'.repeat(650) })) });
  const body = Buffer.from(text);
  const chunks = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < body.length; at += 65_536) controller.enqueue(body.subarray(at, at + 65_536));
      controller.close();
    },
  });
  let started = performance.now();
  await new Response(chunks).json();
  const parseMs = performance.now() - started;
  const scratch = tempSqlite();
  const db = new Database(scratch.url.slice('sqlite:'.length));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE t (v TEXT)');
    started = performance.now();
    db.transaction(() => db.prepare('INSERT INTO t (v) VALUES (?)').run(text))();
    return { parseMs, writeMs: performance.now() - started };
  } finally {
    db.close();
    await scratch.drop();
  }
}
