/**
 * Where the key that seals stored secrets comes from. ADCP_ORCH_SECRET_KEY when set.
 * With embedded SQLite and no key, one is generated once beside the database
 * (mode 0600), so `npm start` works on a fresh machine; PostgreSQL deployments
 * run several instances that must share the key, so there it is required.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { sqlitePathFromUrl } from './store/db.js';

export function resolveSecretKey(configured: string | undefined, databaseUrl: string): { key: string; source: string } {
  if (configured) return { key: configured, source: 'ADCP_ORCH_SECRET_KEY' };
  if (!databaseUrl.startsWith('sqlite:')) {
    throw new Error('ADCP_ORCH_SECRET_KEY is required with PostgreSQL (every instance must share it)');
  }
  const path = sqlitePathFromUrl(databaseUrl);
  if (path === ':memory:') return { key: randomBytes(32).toString('base64url'), source: 'ephemeral' };
  const file = join(dirname(resolve(path)), 'secret.key');
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64url'), { mode: 0o600, flag: 'wx' });
  }
  return { key: readFileSync(file, 'utf8').trim(), source: file };
}
