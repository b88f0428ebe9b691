/**
 * Where the key that seals stored secrets comes from. ADCP_ORCH_SECRET_KEY when set.
 * With embedded SQLite and no key, one is generated once beside the database
 * (mode 0600), so `npm start` works on a fresh machine; PostgreSQL deployments
 * run several instances that must share the key, so there it is required.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
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
  if (!existsSync(file)) createKeyFile(file);
  // Owner only, also for a file that was copied or restored with wider permissions:
  // anyone who can read it can open every sealed secret in the database beside it.
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  return { key: readFileSync(file, 'utf8').trim(), source: file };
}

/**
 * Written in full under a temporary name, then linked into place: two processes
 * starting at once on a fresh directory (serve and `keys create`) both end up
 * reading the one key that won, never a half-written or a second one.
 */
function createKeyFile(file: string): void {
  // A directory made for the key (and the database) is the owner's alone.
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temp, randomBytes(32).toString('base64url'), { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(temp);
  }
}
