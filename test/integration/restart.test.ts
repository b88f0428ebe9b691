/**
 * Restart in the middle: an operation that is `submitted` when the server
 * process dies is polled to `completed` after `serve` starts again on the same
 * database. The seller is a separate server that outlives the orchestrator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { tempSqlite, type TestDatabase } from '../helpers/databases.js';
import { mediaBuyRequest, statusPath } from '../helpers/media-buy.js';
import { eventually } from '../helpers/orchestrator.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process.js';

async function keyFor(databaseUrl: string): Promise<string> {
  const store = await openStore(databaseUrl);
  try {
    const tenant = await store.tenants.ensureTenant('restart-tenant');
    return await store.tenants.createApiKey(tenant.id);
  } finally {
    await store.close();
  }
}

describe('restart', () => {
  let seller: SandboxSeller;
  let database: TestDatabase;
  let serve: ServeProcess | undefined;

  beforeAll(async () => {
    seller = await startSandboxSeller({ submittedDelayMs: 1500 });
    database = tempSqlite();
  });
  afterAll(async () => {
    await serve?.stop('SIGKILL');
    await seller?.close();
    await database?.drop();
  });

  it('a submitted operation survives SIGKILL and completes after serve starts again', async () => {
    const apiKey = await keyFor(database.url);
    serve = await startServeProcess({ databaseUrl: database.url });
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${serve!.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const agent = await call('POST', '/v1/agents', { name: 'seller', role: 'seller', protocol: 'mcp', url: seller.url });
    expect(agent.status).toBe(201);
    const created = await call('POST', '/v1/media-buys', { agent_id: agent.body.id, request: mediaBuyRequest('sandbox_submitted'), webhook: 'none' });
    expect(created.body.status).toBe('submitted');
    const opId = created.body.id;
    const taskId = created.body.task_id;

    await serve.stop('SIGKILL');
    // While the orchestrator is down the seller finishes the work.
    await eventually(async () => (seller.getTask(taskId)?.status === 'completed' ? true : undefined));
    const store = await openStore(database.url);
    expect((await store.operations.get(opId))!.status).toBe('submitted');
    await store.close();

    serve = await startServeProcess({ databaseUrl: database.url });
    const done = await eventually(async () => {
      const res = await call('GET', `/v1/operations/${opId}`);
      return res.body.status === 'completed' ? res.body : undefined;
    });
    expect(statusPath(done)).toEqual(['requested', 'calling_adcp', 'submitted', 'completed']);
    expect(done.events.at(-1).source).toBe('poll');
    expect(done.result.media_buy_id).toMatch(/^mb_/);
    expect(seller.stats().mediaBuysCreatedByKey[done.idempotency_key]).toBe(1);
  });
});
