/**
 * Two orchestrators on one PostgreSQL database: a change made on one reaches an
 * SSE client of the other, woken by LISTEN/NOTIFY alone (the fallback poll is
 * off), in seq order with no gap and no duplicate, and that client can resume
 * on either instance from the last notification it saw.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { postgresAdminUrl, tempPostgres, type TestDatabase } from '../helpers/databases.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { openSse, type SseClient, type SseMessage } from '../helpers/sse-client.js';

const suite = postgresAdminUrl ? describe : describe.skip;

suite('SSE across two instances on PostgreSQL', () => {
  let database: TestDatabase;
  let seller: SandboxSeller;
  let a: TestOrchestrator;
  let b: TestOrchestrator;
  let agentId: string;
  const clients: SseClient[] = [];

  beforeAll(async () => {
    database = await tempPostgres();
    seller = await startSandboxSeller({ submittedDelayMs: 200 });
    const env = { ADCP_ORCH_SSE_FALLBACK_POLL_MS: '0' };
    a = await startOrchestrator({ database, keepDatabase: true, env });
    b = await startOrchestrator({ database, keepDatabase: true, env });
    // Both helpers ensured the same tenant; each has a key of its own.
    expect(b.tenantId).toBe(a.tenantId);
    agentId = await a.registerAgent({ url: seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } });
  }, 60_000);

  afterAll(async () => {
    for (const c of clients) c.close();
    await a?.close();
    await b?.close();
    await seller?.close();
    await database?.drop();
  });

  async function events(on: TestOrchestrator, headers: Record<string, string> = {}) {
    const c = await openSse(`${on.url}/v1/events`, { authorization: `Bearer ${on.apiKey}`, ...headers });
    expect(c.status).toBe(200);
    clients.push(c);
    return c;
  }

  async function buy(on: TestOrchestrator, product = 'sandbox_instant', webhook = 'none'): Promise<string> {
    const res = await on.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest(product), webhook });
    expect(res.status).toBe(202);
    return res.body.id;
  }

  const opOf = (m: SseMessage) => m.data.data.operation?.id as string;
  const stored = (opIds: string[]) => a.app.store.db.kysely.selectFrom('notifications').select(['id', 'type']).where('operation_id', 'in', opIds).orderBy('seq').execute();

  it('a change on one instance reaches an SSE client of the other, in order, once', async () => {
    const onB = await events(b);
    const first = await buy(a);
    await onB.waitFor((m) => opOf(m) === first && m.event === 'operation.completed', 1, 20_000);
    expect(onB.messages.filter((m) => opOf(m) === first).map((m) => m.event)).toEqual(['operation.created', 'operation.completed']);

    // A burst on A (some by webhook, some finished later by either scheduler) while B's client watches.
    const made = await Promise.all(Array.from({ length: 16 }, (_, i) => buy(a, i % 2 ? 'sandbox_submitted' : 'sandbox_instant', i % 2 ? 'rfc9421' : 'none')));
    for (const id of made) await waitForStatus(a, id, ['completed'], 30_000);
    const all = [first, ...made];
    const expected = await stored(all);
    await onB.waitFor((m) => all.includes(opOf(m)), expected.length, 15_000);
    const seen = onB.messages.filter((m) => all.includes(opOf(m)));
    expect(seen.map((m) => m.id)).toEqual(expected.map((r) => r.id));
    expect(seen.map((m) => m.event)).toEqual(expected.map((r) => r.type));
  });

  it('a client dropped from one instance resumes on the other with Last-Event-ID', async () => {
    const onB = await events(b);
    const before = await buy(a);
    await onB.waitFor((m) => opOf(m) === before && m.event === 'operation.completed', 1, 15_000);
    onB.close();
    const last = onB.lastEventId()!;
    // Made while the client was away, on both instances.
    const away = [await buy(a), await buy(b), await buy(a)];
    for (const id of away) await waitForStatus(a, id, ['completed'], 15_000);
    const expected = await stored(away);
    const resumed = await events(a, { 'last-event-id': last });
    // (The buys these made notify of their own as well: the operations' notifications are the ones compared.)
    await resumed.waitFor((m) => away.includes(opOf(m)), expected.length, 15_000);
    expect(resumed.messages.filter((m) => away.includes(opOf(m))).map((m) => m.id)).toEqual(expected.map((r) => r.id));
  });
});
