/**
 * PostgreSQL: a session-level advisory lock that an instance holds on a
 * connection of its own for as long as it lives. When the process dies the kernel
 * closes that connection, the server ends the session and the lock is gone at
 * once, so the others can tell a killed instance from a live one within seconds,
 * without waiting for its heartbeat to go stale. (A paused process or a lost host
 * keeps its connection open or half-open; for those the heartbeat still decides.)
 *
 * Locks are keyed (namespace, key): the namespace is ours, the key random per
 * instance and stored in its `instances` row (`lock_key`). A lock behind a
 * connection pooler in transaction mode would not survive; point
 * ADCP_ORCH_DATABASE_URL at the server or at a session-mode pool.
 */
import { randomInt } from 'node:crypto';
import pg from 'pg';
import { asDatabaseError } from './db-errors.js';
import { DEFAULT_CONNECT_TIMEOUT_MS } from './pg-pool.js';

/** 'ADCP' in ASCII: the first key of every instance lock. */
export const INSTANCE_LOCK_NAMESPACE = 0x41444350;

export class InstanceLock {
  private lost = false;
  private readonly lostHandlers: Array<(err?: Error) => void> = [];

  private constructor(
    private readonly client: pg.Client,
    readonly key: number,
  ) {
    const onLost = (err?: Error) => {
      if (this.lost) return;
      this.lost = true;
      for (const handler of this.lostHandlers) handler(err);
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
  }

  /** Opens a connection and takes a lock under a fresh random key (another, should one be taken). */
  static async acquire(url: string): Promise<InstanceLock> {
    // Bounded, like the pool's: a heartbeat retaking the lock must not hang on a server that does not answer.
    const client = new pg.Client({ connectionString: url, application_name: 'adcp-orchestrator instance lock', connectionTimeoutMillis: DEFAULT_CONNECT_TIMEOUT_MS, keepAlive: true });
    // Until the lock object listens, a dropped connection must not crash the process.
    const early = () => undefined;
    client.on('error', early);
    try {
      await client.connect();
    } catch (err) {
      throw asDatabaseError(err);
    }
    try {
      for (let tries = 0; tries < 5; tries++) {
        const key = randomInt(1, 2 ** 31 - 1);
        const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::int, $2::int) AS ok', [INSTANCE_LOCK_NAMESPACE, key]);
        if (rows[0]?.ok) {
          client.off('error', early);
          return new InstanceLock(client, key);
        }
      }
      throw new Error('could not take an instance lock under five random keys');
    } catch (err) {
      await client.end().catch(() => undefined);
      throw asDatabaseError(err);
    }
  }

  /** True once the connection (and so the lock) is gone. */
  get isLost(): boolean {
    return this.lost;
  }

  onLost(handler: (err?: Error) => void): void {
    this.lostHandlers.push(handler);
  }

  /** Gives the lock up by closing its connection. */
  async release(): Promise<void> {
    this.lost = true;
    await this.client.end().catch(() => undefined);
  }
}
