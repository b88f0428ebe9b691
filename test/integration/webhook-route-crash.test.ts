/**
 * "A crash between receiving a webhook and applying it loses nothing."
 *
 * Three ways:
 *  1. A real process kill. The orchestrator runs in a child process whose
 *     apply is replaced by a SIGKILL of the process. The receiver stores and
 *     applies a delivery in one transaction; when that fails it stores the
 *     delivery on its own and applies it after. Killed in the middle of the one
 *     transaction, nothing was committed nor acknowledged: the seller's retry is
 *     applied by the next orchestrator. Killed after the delivery was stored on
 *     its own (the one transaction failed first): a real signed webhook went
 *     through the real route and receiver, is stored in webhook_deliveries, and
 *     the process dies before applying it (no reply, no clean shutdown). A new
 *     orchestrator on the same SQLite file applies it at start; the seller's
 *     retry is then a 2xx duplicate.
 *  2. In process: a `received` delivery row written by hand, in the format the
 *     receiver stores (the raw body text), the app closed, a new app started
 *     on the same database file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { webhookFingerprint } from '../../src/webhooks/fingerprint.js';
import { tempSqlite, type TestDatabase } from '../helpers/databases.js';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';
import { freePort } from '../helpers/ports.js';
import { createWebhookOperation } from '../helpers/webhook-operation.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SECRET_KEY = 'test-secret-key-0123456789abcdef';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Starts an orchestrator to be closed (and its database dropped) after the test. */
async function start(database: TestDatabase): Promise<TestOrchestrator> {
  const orch = await startOrchestrator({ database, keepDatabase: true });
  let closed = false;
  cleanups.push(async () => {
    if (!closed) await orch.close();
  });
  return Object.assign(orch, {
    close: async () => {
      closed = true;
      await orch.app.close();
    },
  });
}

const createHmacOperation = (orch: TestOrchestrator, agentId: string) => createWebhookOperation(orch, agentId, 'hmac');

function completedBody(op: { id: string; taskId: string }): string {
  return JSON.stringify({
    idempotency_key: `whk_${randomBytes(12).toString('hex')}`,
    operation_id: op.id,
    task_id: op.taskId,
    task_type: 'create_media_buy',
    status: 'completed',
    timestamp: new Date().toISOString(),
    message: 'Media buy created',
    result: { media_buy_id: 'mb_after_crash', packages: [{ package_id: 'pkg_1' }] },
  });
}

function hmacHeaders(secret: string, body: string): Record<string, string> {
  const ts = String(Math.floor(Date.now() / 1000));
  return {
    'content-type': 'application/json',
    'x-adcp-timestamp': ts,
    'x-adcp-signature': `sha256=${createHmac('sha256', secret).update(`${ts}.`).update(body).digest('hex')}`,
  };
}

/** Reads the stored state without starting an app (which would run the recovery sweep). */
async function storedState(database: TestDatabase, opId: string) {
  const store = await openStore(database.url, { migrate: false });
  try {
    const op = await store.operations.get(opId);
    const deliveries = await store.db.kysely.selectFrom('webhook_deliveries').selectAll().where('operation_id', '=', opId).execute();
    return { status: op?.status, result: op?.result, deliveries };
  } finally {
    await store.close();
  }
}

/**
 * The orchestrator in a child process, built by the real createApp, except
 * that applying an observation kills the process on the spot.
 */
const CHILD = `
import { createApp } from './src/app.ts';
import { loadConfig } from './src/config.ts';
import { createLogger } from './src/logger.ts';
const config = loadConfig(JSON.parse(process.env.CRASH_TEST_CONFIG));
const app = await createApp({ config, logger: createLogger('silent') });
const die = () => {
  process.kill(process.pid, 'SIGKILL');
  return new Promise(() => {});
};
if (process.env.CRASH_TEST_WHERE === 'in-transaction') {
  // Dies inside the one transaction that stores and applies the delivery, before its commit.
  app.operations.observeIn = die;
} else {
  // The one transaction fails, so the delivery is stored on its own; dies applying it.
  app.operations.observeIn = async () => { throw new Error('apply failed'); };
  app.operations.observe = die;
}
const url = await app.listen();
process.stdout.write(JSON.stringify({ url }) + '\\n');
`;

async function startDoomedChild(database: TestDatabase, where: 'in-transaction' | 'after-store' = 'after-store'): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const config = {
    ADCP_ORCH_DATABASE_URL: database.url,
    PORT: String(port),
    ADCP_ORCH_PUBLIC_URL: `http://127.0.0.1:${port}`,
    ADCP_ORCH_SECRET_KEY: SECRET_KEY,
    ADCP_ORCH_ALLOW_PRIVATE_NETWORK: 'true',
    LOG_LEVEL: 'silent',
  };
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], {
    cwd: ROOT,
    env: { ...process.env, CRASH_TEST_CONFIG: JSON.stringify(config), CRASH_TEST_WHERE: where },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  const lines = createInterface({ input: child.stdout! });
  const exited = once(child, 'exit').then(() => {
    throw new Error(`child exited before listening: ${stderr}`);
  });
  const ready = (async () => {
    for await (const line of lines) {
      if (line.startsWith('{')) return JSON.parse(line).url as string;
    }
    throw new Error(`child closed stdout: ${stderr}`);
  })();
  const url = await Promise.race([ready, exited]);
  return { child, url };
}

describe('a crash between receiving a webhook and applying it loses nothing', () => {
  it('real process kill inside the transaction that stores and applies: nothing kept, the retry is applied', async () => {
    const database = tempSqlite();
    cleanups.push(() => database.drop());

    const first = await start(database);
    const agentId = await first.registerAgent({ url: 'http://127.0.0.1:9/mcp' });
    const op = await createHmacOperation(first, agentId);
    await first.close();

    const { child, url } = await startDoomedChild(database, 'in-transaction');
    const exit = once(child, 'exit');
    const body = completedBody(op);
    const delivery = fetch(`${url}/webhooks/adcp/${op.token}`, { method: 'POST', headers: hmacHeaders(op.secret, body), body });
    await expect(delivery).rejects.toThrow();
    const [code, signal] = await exit;
    expect(code).toBeNull();
    expect(signal).toBe('SIGKILL');

    // Not acknowledged, so nothing may be half-kept: no delivery row, the operation untouched.
    const left = await storedState(database, op.id);
    expect(left.status).toBe('submitted');
    expect(left.deliveries).toHaveLength(0);

    // The seller never got an answer and retries: applied once.
    const second = await start(database);
    const retry = await fetch(`${second.url}/webhooks/adcp/${op.token}`, { method: 'POST', headers: hmacHeaders(op.secret, body), body });
    expect(retry.status).toBe(200);
    expect(await retry.json()).toMatchObject({ status: 'accepted' });
    const view = await second.api('GET', `/v1/operations/${op.id}`);
    expect(view.body.status).toBe('completed');
    expect(view.body.events.filter((e: any) => e.kind === 'transition')).toHaveLength(1);
    expect((await storedState(database, op.id)).deliveries.map((d) => d.state)).toEqual(['applied']);
  });

  it('real process kill after the delivery is stored (its one transaction failed): applied by the next orchestrator at start', async () => {
    const database = tempSqlite();
    cleanups.push(() => database.drop());

    // An operation in `submitted`, waiting for its webhook.
    const first = await start(database);
    const agentId = await first.registerAgent({ url: 'http://127.0.0.1:9/mcp' });
    const op = await createHmacOperation(first, agentId);
    await first.close();

    // The seller delivers; the orchestrator stores it and dies before applying it.
    const { child, url } = await startDoomedChild(database);
    const exit = once(child, 'exit');
    const body = completedBody(op);
    const delivery = fetch(`${url}/webhooks/adcp/${op.token}`, { method: 'POST', headers: hmacHeaders(op.secret, body), body });
    await expect(delivery).rejects.toThrow();
    const [code, signal] = await exit;
    expect(code).toBeNull();
    expect(signal).toBe('SIGKILL');

    // What it left behind: the delivery stored, not applied; the operation untouched.
    const left = await storedState(database, op.id);
    expect(left.status).toBe('submitted');
    expect(left.result).toBeNull();
    expect(left.deliveries).toHaveLength(1);
    expect(left.deliveries[0]).toMatchObject({ state: 'received', payload: body, idempotency_key: JSON.parse(body).idempotency_key });

    // The next orchestrator applies it at start, before serving.
    const second = await start(database);
    const view = await second.api('GET', `/v1/operations/${op.id}`);
    expect(view.status).toBe(200);
    expect(view.body.status).toBe('completed');
    expect(view.body.result).toEqual(JSON.parse(body).result);
    expect(view.body.events.filter((e: any) => e.kind === 'transition')).toEqual([expect.objectContaining({ source: 'webhook', from: 'submitted', to: 'completed' })]);
    const after = await storedState(database, op.id);
    expect(after.deliveries.map((d) => d.state)).toEqual(['applied']);

    // The seller never got an answer, so it retries: a 2xx duplicate, applied once.
    const retry = await fetch(`${second.url}/webhooks/adcp/${op.token}`, { method: 'POST', headers: hmacHeaders(op.secret, body), body });
    expect(retry.status).toBe(200);
    expect(await retry.json()).toEqual({ status: 'duplicate' });
    const final = await second.api('GET', `/v1/operations/${op.id}`);
    expect(final.body.events.filter((e: any) => e.kind === 'transition')).toHaveLength(1);
  });

  it('in process: a stored, unapplied delivery is applied when a new orchestrator starts on the same database', async () => {
    const database = tempSqlite();
    cleanups.push(() => database.drop());

    const first = await start(database);
    const agentId = await first.registerAgent({ url: 'http://127.0.0.1:9/mcp' });
    const op = await createHmacOperation(first, agentId);
    const body = completedBody(op);
    const payload = JSON.parse(body);
    // As the receiver stores it just before applying: sender, key, canonical fingerprint, raw body text.
    const deliveryId = randomUUID();
    await first.app.store.db.kysely
      .insertInto('webhook_deliveries')
      .values({
        id: deliveryId,
        sender: agentId,
        idempotency_key: payload.idempotency_key,
        fingerprint: webhookFingerprint(payload),
        operation_id: op.id,
        state: 'received',
        outcome: null,
        payload: body,
        received_at: Date.now(),
        applied_at: null,
      })
      .execute();
    // While that instance is up the delivery counts as in flight (it is within the grace period).
    const inFlight = await fetch(`${first.url}/webhooks/adcp/${op.token}`, { method: 'POST', headers: hmacHeaders(op.secret, body), body });
    expect(inFlight.status).toBe(503);
    expect((await first.api('GET', `/v1/operations/${op.id}`)).body.status).toBe('submitted');
    await first.close();

    const second = await start(database);
    const view = await second.api('GET', `/v1/operations/${op.id}`);
    expect(view.body.status).toBe('completed');
    expect(view.body.result).toEqual(payload.result);
    const delivery = await second.app.store.db.kysely.selectFrom('webhook_deliveries').selectAll().where('id', '=', deliveryId).executeTakeFirstOrThrow();
    expect(delivery).toMatchObject({ state: 'applied', outcome: 'transition' });
    expect(delivery.applied_at).not.toBeNull();
    const retry = await fetch(`${second.url}/webhooks/adcp/${op.token}`, { method: 'POST', headers: hmacHeaders(op.secret, body), body });
    expect(retry.status).toBe(200);
    expect(await retry.json()).toEqual({ status: 'duplicate' });
  });
});
