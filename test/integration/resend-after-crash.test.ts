/**
 * A resend after a crash is byte for byte the first send, although the stored
 * request holds its HMAC secret only sealed: the orchestrator (a real `serve`
 * process) is killed while its first create_media_buy is at the seller, which
 * never answers it; after the restart the ambiguous send goes again. The seller
 * records the raw bodies of both, and the webhook it then signs with the secret
 * from the resent request is verified against the sealed copy.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { tempSqlite, type TestDatabase } from '../helpers/databases.js';
import { mediaBuyRequest, statusPath } from '../helpers/media-buy.js';
import { eventually } from '../helpers/orchestrator.js';
import { freePort } from '../helpers/ports.js';
import { toolCalls } from '../helpers/raw-calls.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process.js';

let seller: SandboxSeller | undefined;
let database: TestDatabase | undefined;
let serve: ServeProcess | undefined;

afterAll(async () => {
  await serve?.stop('SIGKILL');
  await seller?.close();
  await database?.drop();
});

describe('a resend after a crash', () => {
  it('sends the very bytes of the first send, and the HMAC webhook for the resent request verifies', { timeout: 120_000 }, async () => {
    const bodies: string[] = [];
    let firstSendArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (firstSendArrived = resolve));
    let releaseFirstSend!: () => void;
    const released = new Promise<'drop'>((resolve) => (releaseFirstSend = () => resolve('drop')));
    seller = await startSandboxSeller({
      submittedDelayMs: 300,
      onMcpRequest: (raw) => {
        bodies.push(raw);
        if (toolCalls(bodies, 'create_media_buy').length !== 1 || toolCalls([raw], 'create_media_buy').length !== 1) return;
        // The first send is held unanswered until the orchestrator has died waiting for it.
        firstSendArrived();
        return released;
      },
    });
    database = tempSqlite();
    const store = await openStore(database.url);
    const apiKey = await store.tenants.createApiKey((await store.tenants.ensureTenant('crash')).id);
    await store.close();
    // The same port after the restart: the seller holds the webhook URL we registered.
    const port = await freePort();
    // A short call timeout keeps the wait for the dead instance's lease short (timeout + 15 s).
    const env = { ADCP_ORCH_CALL_TIMEOUT_MS: '2000', ADCP_ORCH_SYNC_WAIT_MS: '200', ADCP_ORCH_BACKUP_POLL_AFTER_MS: '600000' };
    serve = await startServeProcess({ databaseUrl: database.url, port, env });
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${serve!.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const agent = await call('POST', '/v1/agents', { name: 'seller', role: 'seller', protocol: 'mcp', url: seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } });
    const created = await call('POST', '/v1/media-buys', { agent_id: agent.body.id, request: mediaBuyRequest('sandbox_submitted'), webhook: 'hmac' });
    expect(created.status).toBe(202);
    await arrived;
    await serve.stop('SIGKILL');
    releaseFirstSend();
    const afterCrash = await openStore(database.url);
    expect((await afterCrash.operations.get(created.body.id))!.status).toBe('calling_adcp');
    await afterCrash.close();

    serve = await startServeProcess({ databaseUrl: database.url, port, env });
    const done = await eventually(async () => {
      const op = (await call('GET', `/v1/operations/${created.body.id}`)).body;
      return op.status === 'completed' ? op : undefined;
    }, 90_000, 200);

    // The held first send, then the resend (more than one if a resend timed out on a loaded machine): all the same bytes.
    const [first, ...resent] = toolCalls(bodies, 'create_media_buy');
    expect(resent.length).toBeGreaterThanOrEqual(1);
    const withoutRpcId = (raw: string) => raw.replace(/"id":\d+/, '"id":_');
    for (const again of resent) {
      expect(Buffer.from(again.rawArguments, 'utf8').equals(Buffer.from(first!.rawArguments, 'utf8'))).toBe(true);
      // The rest of the message too, but for the JSON-RPC id of each connection.
      expect(withoutRpcId(again.raw)).toBe(withoutRpcId(first!.raw));
    }
    const hook = resent.at(-1)!.args.push_notification_config;
    expect(hook.authentication.schemes).toEqual(['HMAC-SHA256']);
    expect(hook.authentication.credentials).toMatch(/^[A-Za-z0-9_-]{43}$/);

    expect(done.events.filter((e: any) => e.kind === 'resend').length).toBeGreaterThanOrEqual(1);
    expect(statusPath(done)).toEqual(['requested', 'calling_adcp', 'submitted', 'completed']);
    // Completed by the seller's HMAC webhook (backup polling is off), which therefore verified.
    expect(done.events.at(-1).source).toBe('webhook');
    const webhooks = seller.stats().webhooks.filter((w) => w.task_id === done.task_id);
    expect(webhooks.length).toBeGreaterThan(0);
    expect(webhooks.every((w) => w.auth === 'hmac')).toBe(true);
    expect(webhooks.some((w) => w.delivered && w.final_status === 200)).toBe(true);
    // The held first send never ran: one buy, from the resend.
    expect(seller.stats().mediaBuysCreatedByKey[done.idempotency_key]).toBe(1);
  });
});
