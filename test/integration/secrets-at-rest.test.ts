/**
 * No secret is stored in clear. After a run through every way a secret comes in
 * (test/helpers/secret-flow.ts: HMAC and Bearer operations against the real
 * sandbox seller, agents with tokens, API keys, an agent echoing what it got),
 * the SQLite database file and its write-ahead log, read as raw bytes while the
 * orchestrator still runs (before any checkpoint folds the log into the file),
 * and on PostgreSQL every column of every row of every table, hold none of them.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { sqlitePathFromUrl } from '../../src/store/db.js';
import { dialects } from '../helpers/databases.js';
import { startEchoAgent, type EchoAgent } from '../helpers/echo-agent.js';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';
import { runSecretFlow, secretsIn, type SecretFlowResult } from '../helpers/secret-flow.js';

let seller: SandboxSeller | undefined;
let echo: EchoAgent | undefined;
let orch: TestOrchestrator | undefined;

afterEach(async () => {
  await orch?.close();
  await seller?.close();
  await echo?.close();
  orch = seller = echo = undefined;
});

async function run(make: () => Promise<import('../helpers/databases.js').TestDatabase>): Promise<SecretFlowResult> {
  const sellerToken = `seller-token-${Math.random().toString(36).slice(2)}-0123456789`;
  const sellerBodies: string[] = [];
  seller = await startSandboxSeller({ submittedDelayMs: 300, authToken: sellerToken, onMcpRequest: (raw) => void sellerBodies.push(raw) });
  echo = await startEchoAgent();
  orch = await startOrchestrator({ database: await make() });
  return runSecretFlow({ baseUrl: orch.url, apiKey: orch.apiKey, secretKey: orch.config.ADCP_ORCH_SECRET_KEY!, seller, sellerToken, sellerBodies, echo });
}

describe.each(dialects)('no secret at rest on $name', ({ name, make }) => {
  it('finds none of them in any stored byte or column, while everything still works from what is stored', async () => {
    const flow = await run(make);
    // The flow's own checks passed: the buys completed through their verified webhooks,
    // so what was stored was enough to send them and to verify what came back.
    expect(flow.answers.length).toBeGreaterThan(20);
    for (const answer of flow.answers) expect(secretsIn(answer, flow.secrets, flow.webhookTokens)).toEqual([]);

    if (name === 'sqlite') {
      const file = sqlitePathFromUrl(orch!.database.url);
      const wal = `${file}-wal`;
      // Read while running: the log still holds the latest pages (nothing checkpointed them yet).
      expect(existsSync(wal)).toBe(true);
      expect(statSync(wal).size).toBeGreaterThan(0);
      for (const path of [file, wal, `${file}-shm`].filter(existsSync)) {
        const bytes = readFileSync(path);
        expect({ path, found: secretsIn(bytes, flow.secrets) }).toEqual({ path, found: [] });
      }
      // The scan reads real content: the operations are in these bytes, with their sealed secrets.
      const both = Buffer.concat([readFileSync(file), readFileSync(wal)]);
      for (const id of flow.operationIds) expect(both.includes(id)).toBe(true);
      expect(both.includes('"$sealed":"v1.')).toBe(true);
    } else {
      const client = new pg.Client({ connectionString: orch!.database.url });
      await client.connect();
      try {
        const tables = await client.query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`);
        expect(tables.rows.map((t) => t.table_name)).toEqual(expect.arrayContaining(['operations', 'agents', 'api_keys', 'operation_events', 'webhook_deliveries', 'api_idempotency']));
        let all = '';
        for (const { table_name } of tables.rows) {
          // Each row as text: every column of it, whatever its type.
          const rows = await client.query<{ row: string }>(`SELECT t::text AS row FROM "${table_name}" t`);
          for (const { row } of rows.rows) {
            expect({ table_name, found: secretsIn(row, flow.secrets) }).toEqual({ table_name, found: [] });
            all += row;
          }
        }
        for (const id of flow.operationIds) expect(all).toContain(id);
        expect(all).toContain('""$sealed"":""v1.');
      } finally {
        await client.end();
      }
    }

    // What is stored is still readable where it needs no secret.
    const stored = (await orch!.app.store.operations.get(flow.operationIds[0]!))!;
    const body = JSON.parse(stored.request_body);
    expect(body.packages[0].product_id).toBe('sandbox_submitted');
    expect(Object.keys(body.push_notification_config.authentication.credentials)).toEqual(['$sealed']);
    expect(Object.keys(body.reporting_webhook.authentication.credentials)).toEqual(['$sealed']);
  });
});
