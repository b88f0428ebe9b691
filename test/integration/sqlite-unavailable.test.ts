/**
 * SQLite refusing writes, as a clear 503 and never a crash:
 *
 * - SQLITE_BUSY: another connection holds the file's write lock longer than a write waits
 *   for it (a `sqlite3` shell left in a transaction, a backup tool). Writes answer 503
 *   `database_unavailable` with Retry-After (a create, a dashboard sign-in, the seller's
 *   webhook, which is therefore not acknowledged) while reads go on, answered even as a
 *   write waits for the lock (it waits off the connection); nothing refused was
 *   stored; once the lock is gone the same requests go through and the operation whose
 *   webhook was refused still ends, by polling.
 * - SQLITE_FULL: the file may not grow (max_page_count, as a full disk would): creates
 *   answer 503 until it may, and the refused one left nothing behind.
 */
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { sqlitePathFromUrl } from '../../src/store/db.js';
import { DashboardClient, csrfIn } from '../helpers/dashboard-client.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { eventually, startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';

describe('SQLite refusing writes', () => {
  let orch: TestOrchestrator;
  let seller: SandboxSeller;
  let agentId = '';
  let n = 0;
  const key = () => `sqlite-unavailable-${String(++n).padStart(8, '0')}`;
  const create = (product: string, idempotencyKey: string) =>
    orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest(product, { idempotency_key: idempotencyKey }) });
  const timed = async <T>(fn: () => Promise<T>): Promise<T & { ms: number }> => {
    const started = Date.now();
    const result = await fn();
    return { ...result, ms: Date.now() - started };
  };
  const expectUnavailable = (res: { status: number; body: any; headers: Headers; ms: number }) => {
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: { code: 'database_unavailable', message: expect.any(String) } });
    expect(res.headers.get('retry-after')).toBe('5');
    expect(res.ms).toBeLessThan(10_000);
  };
  const stored = (idempotencyKey: string) => orch.app.store.operations.findByIdempotencyKey(agentId, idempotencyKey);

  beforeAll(async () => {
    seller = await startSandboxSeller({ submittedDelayMs: 300, webhookRetry: { maxAttempts: 1 } });
    orch = await startOrchestrator({ env: { ADCP_ORCH_BACKUP_POLL_AFTER_MS: '1500' } });
    agentId = await orch.registerAgent({ url: seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } });
  });
  afterAll(async () => {
    await orch?.close();
    await seller?.close();
  });

  it('SQLITE_BUSY: writes answer 503 and acknowledge nothing, reads go on, all goes through once the lock is gone', async () => {
    const submitted = await create('sandbox_submitted', key());
    expect(submitted.status).toBe(202);
    const submittedKey = submitted.body.idempotency_key as string;

    const holder = new SQLite(sqlitePathFromUrl(orch.database.url));
    holder.exec('BEGIN IMMEDIATE');
    try {
      const refusedKey = key();
      const order: string[] = [];
      const refused = timed(() => create('sandbox_instant', refusedKey)).finally(() => order.push('create'));
      // A read sent after the write is answered while the write still waits for the lock.
      const list = await orch.api('GET', '/v1/operations?limit=5').finally(() => order.push('list'));
      expect(list.status).toBe(200);
      expectUnavailable(await refused);
      expect(order).toEqual(['list', 'create']);
      // Signing in stores a session: the dashboard says plainly that it cannot now.
      const page = new DashboardClient(orch.url);
      const signIn = await page.post('/login', { _csrf: csrfIn((await page.get('/login')).text), api_key: orch.apiKey });
      expect(signIn.status).toBe(503);
      expect(signIn.headers.get('retry-after')).toBe('5');
      expect(signIn.text).toContain('Database unavailable');
      // The seller's webhook for the submitted buy met the lock: refused, not acknowledged.
      await eventually(async () => (seller.stats().webhooks.length > 0 ? true : undefined), 15_000);
      expect(seller.stats().webhooks.map((w) => [w.delivered, w.final_status])).toEqual([[false, 503]]);
      holder.exec('ROLLBACK');
      // Refused means not stored: the retry is the first time that key is seen.
      expect(await stored(refusedKey)).toBeUndefined();
      expect(seller.stats().createCallsByKey[refusedKey]).toBeUndefined();
      const again = await create('sandbox_instant', refusedKey);
      expect(again.status).toBe(202);
      await waitForStatus(orch, again.body.id, ['completed']);
      expect((await page.signIn(orch.apiKey)).status).toBe(303);
    } finally {
      if (holder.inTransaction) holder.exec('ROLLBACK');
      holder.close();
    }
    // The refused webhook's operation ends all the same (the backup poll), bought once.
    const op = (await stored(submittedKey))!;
    await waitForStatus(orch, op.id, ['completed']);
    expect(seller.stats().mediaBuysCreatedByKey[submittedKey]).toBe(1);
    const metrics = await (await fetch(`${orch.url}/metrics`)).text();
    for (const where of ['api', 'dashboard', 'webhook']) expect(metrics, where).toMatch(new RegExp(`^adcp_orch_database_unavailable_total\\{where="${where}"\\} [1-9]`, 'm'));
  }, 60_000);

  it('SQLITE_FULL: creates answer 503 while the file may not grow, and nothing refused is stored', async () => {
    const db = orch.app.store.db.kysely;
    const pages = Number((await sql<{ page_count: number }>`PRAGMA page_count`.execute(db)).rows[0]!.page_count);
    await sql.raw(`PRAGMA max_page_count = ${pages}`).execute(db);
    let refused: string | undefined;
    try {
      // Each create adds rows; the first that needs a new page is refused.
      for (let i = 0; i < 200 && !refused; i++) {
        const k = key();
        const res = await timed(() => create('sandbox_instant', k));
        if (res.status === 503) {
          expectUnavailable(res);
          refused = k;
        } else expect(res.status).toBe(202);
      }
      expect(refused).toBeDefined();
      expect(await stored(refusedKeyOf(refused))).toBeUndefined();
      expect(seller.stats().createCallsByKey[refusedKeyOf(refused)]).toBeUndefined();
    } finally {
      await sql.raw('PRAGMA max_page_count = 1073741823').execute(db);
    }
    const again = await create('sandbox_instant', refusedKeyOf(refused));
    expect(again.status).toBe(202);
    await waitForStatus(orch, again.body.id, ['completed']);
  }, 60_000);
});

function refusedKeyOf(key: string | undefined): string {
  if (!key) throw new Error('no create was refused');
  return key;
}
