/**
 * The PostgreSQL pool Kysely runs on, made safe for a database that goes away.
 *
 * - Every connection has an error listener for its whole life. node-postgres emits
 *   'error' on a client whose server hung up; pg-pool listens only while a client is
 *   idle, so one checked out for a query or a transaction had none and the event
 *   killed the process. Now the statement in flight fails (node-postgres fails every
 *   queued query of a broken client) and the pool drops the client on release.
 * - Errors that mean "the database is away" reach callers as DatabaseUnavailableError
 *   (src/store/db-errors.ts): from acquiring a connection and from every statement.
 * - Acquiring a connection is bounded (`connectTimeoutMs`): a server that does not
 *   answer, or a pool whose connections are all stuck, fails the caller instead of
 *   holding it.
 * - A statement that has not answered after `stallCheckMs` is checked on: if a fresh
 *   connection gets no word from the server either within as long again, the stuck one
 *   is cut (its statement fails at once, typed) instead of waiting minutes for TCP to
 *   give up. If the server answers (even with an error), the statement is only slow (a
 *   lock wait, a big query) and is left alone, however long it takes.
 */
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import pg from 'pg';
import { asDatabaseError } from './db-errors.js';

export interface GuardedPoolOptions {
  url: string;
  max: number;
  /** Longest wait for a connection (a new one, or a free one from a full pool). */
  connectTimeoutMs: number;
  /** How long a statement may go unanswered before we check whether the server is there at all. */
  stallCheckMs: number;
  /** A connection failed (lost while idle or in use); the pool replaces it when next needed. */
  onConnectionLost?: (err: Error) => void;
}

/**
 * A handshake with a live server takes milliseconds; seconds mean it is not answering. A
 * request caught on a connection to a server that stopped answering is answered within
 * about twice the stall check (the check, then a probe given as long), well under ten
 * seconds; one that needs a new connection, within the connect timeout.
 */
export const DEFAULT_CONNECT_TIMEOUT_MS = 4_000;
export const DEFAULT_STALL_CHECK_MS = 2_500;

export class GuardedPool implements PostgresPool {
  private readonly pool: pg.Pool;
  private readonly wrapped = new WeakMap<pg.PoolClient, GuardedClient>();
  private readonly probe: ServerProbe;

  constructor(private readonly options: GuardedPoolOptions) {
    this.pool = new pg.Pool({
      connectionString: options.url,
      max: options.max,
      connectionTimeoutMillis: options.connectTimeoutMs,
      // Lets the kernel notice a peer that vanished without a word (a host lost, a NAT entry dropped).
      keepAlive: true,
    });
    // A probe waits as long as the stall check: a server that takes seconds to take a new
    // connection is not going to answer the stalled statement soon either.
    this.probe = new ServerProbe(options.url, options.stallCheckMs);
    // The listener of the whole life of each connection (pg-pool only listens while it is idle).
    this.pool.on('connect', (client) => client.on('error', (err) => options.onConnectionLost?.(err)));
    // pg-pool re-emits an idle connection's error on the pool: already reported by the listener above,
    // but an 'error' event without a listener would still end the process.
    this.pool.on('error', () => undefined);
  }

  async connect(): Promise<PostgresPoolClient> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw asDatabaseError(err);
    }
    let guarded = this.wrapped.get(client);
    if (!guarded) {
      guarded = new GuardedClient(client, this.options.stallCheckMs, this.probe);
      this.wrapped.set(client, guarded);
    }
    return guarded;
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}

class GuardedClient implements PostgresPoolClient {
  constructor(
    private readonly client: pg.PoolClient,
    private readonly stallCheckMs: number,
    private readonly probe: ServerProbe,
  ) {}

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query(sqlOrCursor: unknown, parameters?: ReadonlyArray<unknown>): unknown {
    // Kysely streams through a cursor only when its dialect is given one; ours is not.
    if (typeof sqlOrCursor !== 'string') throw new Error('streaming through a cursor is not supported here');
    return this.run(sqlOrCursor, parameters ?? []);
  }

  private async run(sql: string, parameters: ReadonlyArray<unknown>): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    const check = () => {
      timer = setTimeout(() => {
        void this.probe.reachable().then((up) => {
          if (timer === undefined) return; // answered meanwhile
          if (up) check();
          else cut(this.client);
        });
      }, this.stallCheckMs);
      timer.unref();
    };
    check();
    try {
      return await this.client.query(sql, parameters as unknown[]);
    } catch (err) {
      throw asDatabaseError(err);
    } finally {
      clearTimeout(timer);
      timer = undefined;
    }
  }

  release(destroy?: boolean): void {
    this.client.release(destroy);
  }
}

/** Ends a connection whose server is unreachable: its statements fail now, and the pool drops it on release. */
function cut(client: pg.PoolClient): void {
  const stream = (client as unknown as { connection?: { stream?: { destroy(err?: Error): void } } }).connection?.stream;
  stream?.destroy(new Error('Connection terminated: the server did not answer and could not be reached'));
}

/**
 * Whether the server answers a fresh connection now. One probe at a time, and its answer
 * is trusted for a while, so many stalled statements cost one connection (and those
 * stalled just after a failed probe are cut at once).
 */
class ServerProbe {
  private running: Promise<boolean> | undefined;
  private upAt = 0;
  private downAt = 0;

  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  reachable(): Promise<boolean> {
    if (Date.now() - this.upAt < this.timeoutMs) return Promise.resolve(true);
    if (Date.now() - this.downAt < this.timeoutMs) return Promise.resolve(false);
    this.running ??= this.attempt().finally(() => (this.running = undefined));
    return this.running;
  }

  private async attempt(): Promise<boolean> {
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: this.timeoutMs, application_name: 'adcp-orchestrator probe' });
    client.on('error', () => undefined);
    let timer: NodeJS.Timeout | undefined;
    try {
      const answered = (async () => {
        await client.connect();
        await client.query('SELECT 1');
        return true;
      })();
      const gaveUp = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), this.timeoutMs)));
      // A server that answers with an error (too many connections, starting up) is there: only silence,
      // a refusal or a reset means the stalled statement's connection leads nowhere.
      const up = await Promise.race([answered.catch((err: { code?: unknown }) => typeof err?.code === 'string' && /^[0-9A-Z]{5}$/.test(err.code)), gaveUp]);
      if (up) this.upAt = Date.now();
      else this.downAt = Date.now();
      return up;
    } finally {
      clearTimeout(timer);
      // A probe stuck in its handshake is torn down with the socket, not left waiting.
      void client.end().catch(() => undefined);
    }
  }
}
