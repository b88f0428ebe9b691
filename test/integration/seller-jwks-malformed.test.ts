/**
 * A seller's JWKS that is malformed (not JSON, no `keys` array, a key whose `x` is not
 * a key, a key of another purpose, an endless body, an error status) never crashes us:
 * its RFC 9421 webhook is refused (401, or 503 when the keys could not be read, so the
 * seller tries again), nothing is applied, and the orchestrator goes on serving, a
 * webhook signed by a key from a good JWKS included.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';
import { insertWebhookOperation } from '../helpers/webhook-operation.js';
import { publicJwk, signWebhook, testKey } from '../unit/webhooks/signing-helpers.js';

const KID = 'test-ed25519-webhook-2026';
const good = publicJwk(testKey(KID));

/** What each JWKS path answers: [status, body]. */
const ANSWERS: Record<string, [number, string]> = {
  '/not-json': [200, '{"keys": ['],
  '/no-keys': [200, '{"keys": "none"}'],
  '/array': [200, '[]'],
  '/null': [200, 'null'],
  '/bad-x': [200, JSON.stringify({ keys: [{ ...good, x: '!!not base64url!!' }] })],
  '/wrong-purpose': [200, JSON.stringify({ keys: [{ ...good, adcp_use: 'governance-signing' }] })],
  '/wrong-types': [200, JSON.stringify({ keys: [{ ...good, key_ops: 'verify', kty: 42 }, 7, null, 'x'] })],
  '/huge': [200, `{"keys":[${'{"kid":"x"},'.repeat(400_000)}{}]}`],
  '/error': [500, 'oops'],
  '/good': [200, JSON.stringify({ keys: [good] })],
};

describe("a seller's malformed JWKS", () => {
  let orch: TestOrchestrator;
  let server: Server;
  let origin: string;
  const clock = { ms: 1_700_000_000_000, now: () => clock.ms, random: () => 0.5 };

  beforeAll(async () => {
    server = createServer((req, res) => {
      const [status, body] = ANSWERS[req.url ?? ''] ?? [404, ''];
      res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    orch = await startOrchestrator({ clock });
  });
  afterAll(async () => {
    await orch?.close();
    await new Promise<void>((r) => server.close(() => r()));
  });

  async function deliver(path: string): Promise<{ status: number; opStatus: string }> {
    const agentId = await orch.registerAgent({ name: `seller${path.replace(/\W/g, '-')}`, url: 'http://127.0.0.1:9/mcp', webhook_signing: { jwks_uri: `${origin}${path}` } });
    const id = `op-${randomBytes(6).toString('hex')}`;
    const token = randomBytes(24).toString('base64url');
    await insertWebhookOperation(orch, agentId, { id, mode: 'rfc9421', token, taskId: `task-${id}` });
    const body = JSON.stringify({ idempotency_key: `key-${id}`, task_id: `task-${id}`, task_type: 'create_media_buy', status: 'working', timestamp: new Date(clock.ms - 1000).toISOString(), operation_id: id });
    const headers = signWebhook({ kid: KID, url: `${orch.config.ADCP_ORCH_PUBLIC_URL}/webhooks/adcp/${token}`, body: Buffer.from(body), createdSeconds: Math.floor(clock.ms / 1000) });
    const res = await fetch(`${orch.url}/webhooks/adcp/${token}`, { method: 'POST', headers, body });
    const op = await orch.app.store.operations.get(id);
    return { status: res.status, opStatus: op!.status };
  }

  for (const path of Object.keys(ANSWERS).filter((p) => p !== '/good')) {
    it(`${path}: the webhook is refused, nothing applied, and we keep serving`, async () => {
      const { status, opStatus } = await deliver(path);
      expect([401, 503]).toContain(status);
      expect(opStatus).toBe('submitted');
      expect((await fetch(`${orch.url}/healthz`)).status).toBe(200);
    });
  }

  it('a good JWKS after all of them: the webhook is taken', async () => {
    const { status, opStatus } = await deliver('/good');
    expect(status).toBe(200);
    expect(opStatus).toBe('working');
  });
});
