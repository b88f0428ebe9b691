/**
 * Dashboard sessions: a random token in the browser's cookie, its SHA-256 here.
 * A session stands for the API key it was opened with, so reading one joins the
 * key (and its tenant): a key that is gone ends its sessions at once.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from './db.js';
import type { KeyHolder } from './tenants-repo.js';

export type SessionLookup =
  | { state: 'active'; holder: KeyHolder; expiresAt: number }
  | { state: 'expired' }
  /** Never issued, signed out, or its key is gone. */
  | { state: 'unknown' };

export function hashSessionToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export class SessionsRepo {
  constructor(private readonly db: Db) {}

  /** Opens a session for a key; returns the token for the cookie (shown nowhere else, stored only hashed). */
  async open(tenantId: string, keyId: string, ttlMs: number, now = Date.now()): Promise<{ token: string; expiresAt: number }> {
    const token = `aos_${randomBytes(32).toString('base64url')}`;
    const expiresAt = now + ttlMs;
    await this.db.kysely
      .insertInto('sessions')
      .values({ token_hash: hashSessionToken(token), tenant_id: tenantId, key_id: keyId, created_at: now, expires_at: expiresAt })
      .execute();
    return { token, expiresAt };
  }

  async lookup(token: string, now = Date.now()): Promise<SessionLookup> {
    const hash = hashSessionToken(token);
    const row = await this.db.kysely
      .selectFrom('sessions')
      .leftJoin('api_keys', 'api_keys.id', 'sessions.key_id')
      .leftJoin('tenants', 'tenants.id', 'api_keys.tenant_id')
      .select([
        'sessions.expires_at',
        'sessions.tenant_id as session_tenant',
        'api_keys.id as key_id',
        'api_keys.tenant_id',
        'api_keys.name',
        'api_keys.role',
        'api_keys.prefix',
        'api_keys.created_at',
        'tenants.name as tenant_name',
      ])
      .where('sessions.token_hash', '=', hash)
      .executeTakeFirst();
    if (!row) return { state: 'unknown' };
    const keyGone = row.key_id === null || row.tenant_id !== row.session_tenant || row.tenant_name === null;
    if (keyGone) {
      await this.db.kysely.deleteFrom('sessions').where('token_hash', '=', hash).execute();
      return { state: 'unknown' };
    }
    // Kept until the next sweep, so every request made with it is told it expired.
    if (row.expires_at <= now) return { state: 'expired' };
    return {
      state: 'active',
      expiresAt: row.expires_at,
      holder: {
        tenant: { id: row.tenant_id!, name: row.tenant_name! },
        key: { id: row.key_id!, tenant_id: row.tenant_id!, name: row.name!, role: row.role!, prefix: row.prefix!, created_at: row.created_at! },
      },
    };
  }

  /** Sign-out: the token stops working everywhere at once. */
  async close(token: string): Promise<void> {
    await this.db.kysely.deleteFrom('sessions').where('token_hash', '=', hashSessionToken(token)).execute();
  }

  /** Ends every session opened with a key (the key was revoked or changed hands). */
  async closeForKey(keyId: string): Promise<number> {
    const result = await this.db.kysely.deleteFrom('sessions').where('key_id', '=', keyId).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Removes sessions past their expiry; they are refused anyway, this only keeps the table small. */
  async sweepExpired(now = Date.now()): Promise<number> {
    const result = await this.db.kysely.deleteFrom('sessions').where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
