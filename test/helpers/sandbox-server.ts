/**
 * A real `serve --sandbox` process on a fresh SQLite file, as `npm start` runs it,
 * with a known admin key (ADCP_ORCH_API_KEY), the sandbox seller's agent id, and
 * `keys create` against its database for keys of other roles. Used by the browser
 * tests and the CLI tests that talk to it over loopback.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tempSqlite, type TestDatabase } from './databases.js';
import { eventually } from './orchestrator.js';
import { startServeProcess, type ServeProcess } from './serve-process.js';

const BIN = fileURLToPath(new URL('../../bin/adcp-orchestrator.js', import.meta.url));

/** A `serve --sandbox` process on a fresh SQLite file, with a known admin key and the sandbox seller's agent id. */
export interface SandboxServer {
  serve: ServeProcess;
  database: TestDatabase;
  adminKey: string;
  sellerId: string;
  /** `keys create --tenant sandbox --name N --role R` against its database; returns the key. */
  createKey(name: string, role: string): Promise<string>;
  api(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function startSandboxServer(env: Record<string, string> = {}): Promise<SandboxServer> {
  const database = tempSqlite();
  const adminKey = `sandbox-test-admin-${Date.now().toString(36)}-key`;
  const serve = await startServeProcess({ databaseUrl: database.url, args: ['--sandbox'], env: { ADCP_ORCH_API_KEY: adminKey, ...env } });
  const api: SandboxServer['api'] = async (key, method, path, body) => {
    const res = await fetch(`${serve.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  // Ready comes before the sandbox is set up (its key and seller are stored just after listening).
  const seller = await eventually(async () => {
    const agents = await api(adminKey, 'GET', '/v1/agents');
    return agents.status === 200 ? (agents.body.agents as Array<{ id: string; name: string }>).find((a) => a.name === 'sandbox-seller') : undefined;
  }, 30_000);
  return {
    serve,
    database,
    adminKey,
    sellerId: seller.id,
    api,
    createKey: (name, role) =>
      new Promise((resolve, reject) => {
        execFile(process.execPath, [BIN, 'keys', 'create', '--tenant', 'sandbox', '--name', name, '--role', role, '--db', database.url], (err, stdout, stderr) => {
          if (err) return reject(new Error(`keys create failed: ${stderr}`));
          const lines = stdout.trimEnd().split('\n');
          resolve(lines[lines.length - 1]!);
        });
      }),
    async close() {
      await serve.stop();
      await database.drop();
    },
  };
}
