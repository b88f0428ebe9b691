/**
 * No secret in the logs or in an API answer, with everything logged: a real
 * `serve` process at LOG_LEVEL=debug, all its output captured, through the run
 * of test/helpers/secret-flow.ts (HMAC and Bearer operations, agents with
 * tokens, wrong API keys, agents that fail and echo what they got, forged
 * webhooks). Neither the secrets nor the webhook URL tokens appear in it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { tempSqlite, type TestDatabase } from '../helpers/databases.js';
import { startEchoAgent, type EchoAgent } from '../helpers/echo-agent.js';
import { runSecretFlow, secretsIn } from '../helpers/secret-flow.js';
import { startServeProcess, TEST_SECRET_KEY, type ServeProcess } from '../helpers/serve-process.js';

let seller: SandboxSeller | undefined;
let echo: EchoAgent | undefined;
let database: TestDatabase | undefined;
let serve: ServeProcess | undefined;

afterAll(async () => {
  await serve?.stop('SIGKILL');
  await seller?.close();
  await echo?.close();
  await database?.drop();
});

describe('secrets in logs and answers', () => {
  it('at LOG_LEVEL=debug, none is logged, and none is in any answer', { timeout: 120_000 }, async () => {
    const sellerToken = `seller-token-${Math.random().toString(36).slice(2)}-0123456789`;
    const sellerBodies: string[] = [];
    seller = await startSandboxSeller({ submittedDelayMs: 300, authToken: sellerToken, onMcpRequest: (raw) => void sellerBodies.push(raw) });
    echo = await startEchoAgent();
    database = tempSqlite();
    const store = await openStore(database.url);
    const apiKey = await store.tenants.createApiKey((await store.tenants.ensureTenant('logs')).id);
    await store.close();
    serve = await startServeProcess({ databaseUrl: database.url, env: { LOG_LEVEL: 'debug', ADCP_ORCH_CALL_TIMEOUT_MS: '5000', ADCP_ORCH_SYNC_WAIT_MS: '3000' } });

    const flow = await runSecretFlow({ baseUrl: serve.url, apiKey, secretKey: TEST_SECRET_KEY, seller, sellerToken, sellerBodies, echo });
    // A clean stop flushes everything the process had to say.
    await serve.stop('SIGTERM');
    const output = serve.output();

    // The log is the real one, at debug, and covers the flow: start, refusals, retries, stop.
    expect(output).toContain('"msg":"orchestrator ready"');
    expect(output).toContain('"msg":"webhook refused"');
    expect(output).toMatch(/"msg":"send failed; will retry"/);
    expect(output).toContain('"msg":"shutting down"');
    expect(secretsIn(output, flow.secrets, flow.webhookTokens)).toEqual([]);

    for (const answer of flow.answers) expect(secretsIn(answer, flow.secrets, flow.webhookTokens)).toEqual([]);
  });
});
