/**
 * The HMAC ingest floor with what our contract stores for an operation webhook
 * (bench/webhook-ingest.ts, information beside the floor of record), to measure how much
 * of the distance from the floor is the contract's own storage rather than our code.
 *
 * The floor of record stores the raw body and nothing else. Our contract also asks that a
 * delivery be deduplicated (the sender's idempotency key: a retry changes nothing), applied
 * to its operation before it is acknowledged (the figure counts applied deliveries), the
 * change recorded in the operation's history, and a status change notified. This floor does
 * exactly that and nothing else, as cheaply as SQLite allows, in the floor of record's group
 * commit (bench/lib/floor-sqlite.ts), answering 200 after the COMMIT:
 *
 * - the body parsed for its idempotency key and status (the HMAC checked first, as there);
 * - one INSERT of the delivery, UNIQUE (sender, idempotency key), nothing else on a repeat;
 * - one UPDATE of the operation's row (as wide as ours where it costs pages: the ~600-byte
 *   request, the timer and its index), its status kept in memory as a receiver caches it;
 * - one INSERT of the history event (indexed by operation and time) and, when the status
 *   changed, one of a notification.
 *
 * Left out, so this is a lower bound of the contract's storage: the buy a completed create
 * makes (a fifth of the deliveries of the bench's mix), its events and notification.
 */
import { join } from 'node:path';
import Fastify, { type FastifyRequest } from 'fastify';
import { openFloorDb, TurnCommitter } from './floor-sqlite.js';
import { hmacMatches } from './ingest-endpoints.js';
import { sampleRequestBody } from './orchestrator.js';

const SCHEMA = `
  CREATE TABLE operations (
    id TEXT PRIMARY KEY, status TEXT NOT NULL, request_body TEXT NOT NULL, result TEXT,
    next_check_at INTEGER, last_observed_at INTEGER, updated_at INTEGER NOT NULL);
  CREATE INDEX operations_due ON operations (next_check_at) WHERE next_check_at IS NOT NULL;
  CREATE TABLE deliveries (id INTEGER PRIMARY KEY, sender TEXT NOT NULL, idempotency_key TEXT NOT NULL,
    body BLOB NOT NULL, received_at INTEGER NOT NULL, UNIQUE (sender, idempotency_key));
  CREATE TABLE events (id INTEGER PRIMARY KEY, operation_id TEXT NOT NULL, at INTEGER NOT NULL,
    kind TEXT NOT NULL, from_status TEXT, to_status TEXT);
  CREATE INDEX events_operation ON events (operation_id, at);
  CREATE TABLE notifications (seq INTEGER PRIMARY KEY AUTOINCREMENT, operation_id TEXT NOT NULL,
    type TEXT NOT NULL, created_at INTEGER NOT NULL, body TEXT NOT NULL);`;

/** Quiet time before the backup poll of a task that has a webhook (ADCP_ORCH_BACKUP_POLL_AFTER_MS's default). */
const BACKUP_POLL_AFTER_MS = 120_000;

export interface AppliedIngestFloor {
  origin: string;
  /** Seeds the operations the deliveries name, `submitted`, keyed by their webhook token's operation. */
  addOperations(ops: Array<{ id: string; token: string; secret: string }>): void;
  /** Deliveries stored and applied, and repeats answered without a change, so far. */
  tally(): { stored: number; repeats: number };
  groupSize(): number;
  close(): Promise<void>;
}

export async function startAppliedIngestFloor(dir: string): Promise<AppliedIngestFloor> {
  const db = openFloorDb(join(dir, 'floor-ingest-applied.db'), SCHEMA);
  const committer = new TurnCommitter(db);
  const insertOperation = db.prepare("INSERT INTO operations (id, status, request_body, next_check_at, updated_at) VALUES (?, 'submitted', ?, ?, ?)");
  const insertDelivery = db.prepare('INSERT INTO deliveries (sender, idempotency_key, body, received_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING');
  const updateOperation = db.prepare('UPDATE operations SET status = ?, result = ?, next_check_at = ?, last_observed_at = ?, updated_at = ? WHERE id = ?');
  const insertEvent = db.prepare('INSERT INTO events (operation_id, at, kind, from_status, to_status) VALUES (?, ?, ?, ?, ?)');
  const insertNotification = db.prepare('INSERT INTO notifications (operation_id, type, created_at, body) VALUES (?, ?, ?, ?)');
  /** token → the operation and its HMAC secret, as our receiver keeps its webhook targets. */
  const targets = new Map<string, { id: string; secret: string }>();
  /** Each operation's status, as a receiver holding the row would know it. */
  const statusOf = new Map<string, string>();
  let repeats = 0;

  const app = Fastify({ logger: false });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 2 * 1024 * 1024 }, (_req, body, done) => done(null, body));
  app.post<{ Params: { token: string } }>('/webhooks/adcp/:token', async (req: FastifyRequest<{ Params: { token: string } }>, reply) => {
    const target = targets.get(req.params.token);
    if (!target || !hmacMatches(target.secret, req)) return reply.code(401).send({ error: 'unauthenticated' });
    const body = req.body as Buffer;
    const payload = JSON.parse(body.toString('utf8')) as { idempotency_key: string; status: string; result?: unknown };
    const applied = await committer.write(() => {
      const now = Date.now();
      if (insertDelivery.run(target.id, payload.idempotency_key, body, now).changes === 0) return false;
      const from = statusOf.get(target.id) ?? 'submitted';
      const terminal = payload.status === 'completed' || payload.status === 'failed';
      const result = payload.result === undefined ? null : JSON.stringify(payload.result);
      updateOperation.run(payload.status, result, terminal ? null : now + BACKUP_POLL_AFTER_MS, now, now, target.id);
      insertEvent.run(target.id, now, from === payload.status ? 'progress' : 'transition', from, payload.status);
      if (from !== payload.status) insertNotification.run(target.id, `operation.${payload.status}`, now, JSON.stringify({ status: payload.status, result: payload.result ?? null }));
      statusOf.set(target.id, payload.status);
      return true;
    });
    if (!applied) repeats++;
    return reply.code(200).send({ status: applied ? 'accepted' : 'duplicate' });
  });
  const origin = await app.listen({ port: 0, host: '127.0.0.1' });
  const countStored = db.prepare('SELECT count(*) FROM deliveries').pluck();
  return {
    origin,
    addOperations: (ops) => {
      const now = Date.now();
      db.transaction(() => {
        for (const op of ops) {
          targets.set(op.token, { id: op.id, secret: op.secret });
          insertOperation.run(op.id, sampleRequestBody(op.id, `key-${op.id}`), now + BACKUP_POLL_AFTER_MS, now);
        }
      })();
    },
    tally: () => ({ stored: countStored.get() as number, repeats }),
    groupSize: () => committer.stats.writes / Math.max(1, committer.stats.commits),
    close: async () => {
      await app.close();
      db.close();
    },
  };
}
