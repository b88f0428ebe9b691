/**
 * The webhook endpoints the orchestrator's ingest is measured against (BENCHMARKS.md,
 * Targets), each a bare Fastify server with a raw body on loopback, in the bench's process:
 *
 * - durable floor, HMAC: checks the HMAC, then stores the delivery with ONE INSERT into
 *   SQLite (WAL, synchronous=FULL), group-committed once per turn of the event loop
 *   (bench/lib/floor-sqlite.ts), and answers 200 after that COMMIT. It stores the token
 *   and the raw body: it neither parses nor deduplicates (an inbox that does both later
 *   could stop there), so no design that keeps "stored before acknowledged" is cheaper.
 * - durable floor, RFC 9421: the same, verifying the same signature with the same
 *   verifier (src/webhooks/rfc9421.ts, keys from the same registration), the nonce the
 *   verifier accepted written in the same INSERT, into a UNIQUE (keyid, nonce) pair: a
 *   replay loses there (0 rows inserted → 401), as our own nonce insert does in the
 *   delivery's transaction. The verifier's cheap pre-checks (already seen, at capacity)
 *   are answered "no" from nothing, so the UNIQUE insert is the only replay check.
 * - bare, information only: the same HMAC check, or the same verifier with an in-memory
 *   nonce set, storing nothing (the baselines of earlier sessions).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type { NonceReplayStore, WebhookKeySource } from '../../src/adcp/webhook-signature.js';
import { DeferredNonce } from '../../src/webhooks/deferred-nonce.js';
import { InMemoryNonceReplayStore } from '../../src/webhooks/memory-replay-store.js';
import { authenticateRfc9421 } from '../../src/webhooks/rfc9421.js';
import { openFloorDb, TurnCommitter } from './floor-sqlite.js';

export type IngestMode = 'hmac' | 'rfc9421';

export interface IngestEndpoints {
  /** Origins of the bare endpoints (store nothing). */
  bare: Record<IngestMode, string>;
  /** Origins of the durable floors. */
  floor: Record<IngestMode, string>;
  /** Deliveries in a floor's table: every one it acknowledged must be there. */
  floorStored(mode: IngestMode): number;
  /** Mean writes per group commit of a floor, so far. */
  floorGroupSize(mode: IngestMode): number;
  close(): Promise<void>;
}

export interface IngestEndpointOptions {
  /** The orchestrator's origin: RFC 9421 senders signed its URL, which every endpoint verifies against. */
  signedOrigin: string;
  /** HMAC secret of each webhook token (the floor keeps what our receiver caches). */
  secretByToken: Map<string, string>;
  /** The sending agent's webhook keys (RFC 9421). */
  keys: WebhookKeySource;
  /** Where the floors' SQLite files go (the orchestrator's disk). */
  dir: string;
}

type WebhookRequest = FastifyRequest<{ Params: { token: string } }>;
const PATH = '/webhooks/adcp/:token';

function rawBodyApp(): FastifyInstance {
  const app = Fastify({ logger: false });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 2 * 1024 * 1024 }, (_req, body, done) => done(null, body));
  return app;
}

/** The legacy HMAC check (`sha256=` over "<timestamp>.<body>"), as the bare endpoint of earlier sessions made it. */
function hmacValid(secretByToken: Map<string, string>, req: WebhookRequest): boolean {
  const secret = secretByToken.get(req.params.token);
  return secret !== undefined && hmacMatches(secret, req);
}

/** Whether the request's legacy HMAC signature is `secret`'s over its timestamp and raw body. */
export function hmacMatches(secret: string, req: FastifyRequest): boolean {
  const sig = req.headers['x-adcp-signature'];
  const ts = req.headers['x-adcp-timestamp'];
  if (typeof sig !== 'string' || typeof ts !== 'string' || !sig.startsWith('sha256=')) return false;
  const expected = createHmac('sha256', secret).update(`${ts}.`, 'utf8').update(req.body as Buffer).digest();
  const presented = Buffer.from(sig.slice(7), 'hex');
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

/** Answers the verifier's pre-checks from nothing: the floor's UNIQUE insert decides. */
const NO_SHARED_CACHE: NonceReplayStore = {
  isAtCapacity: async () => false,
  has: async () => false,
  checkAndInsert: async () => 'fresh',
};

export async function startIngestEndpoints(opts: IngestEndpointOptions): Promise<IngestEndpoints> {
  const signedUrl = (req: WebhookRequest) => `${opts.signedOrigin}/webhooks/adcp/${encodeURIComponent(req.params.token)}`;

  // --- bare: information only ---
  const bareHmac = rawBodyApp();
  bareHmac.post<{ Params: { token: string } }>(PATH, async (req, reply) => {
    if (!hmacValid(opts.secretByToken, req)) return reply.code(401).send({ error: 'unauthenticated' });
    return reply.code(200).send({ status: 'accepted' });
  });
  const bareRfc = rawBodyApp();
  const bareNonces = new InMemoryNonceReplayStore();
  bareRfc.post<{ Params: { token: string } }>(PATH, async (req, reply) => {
    const auth = await authenticateRfc9421({ method: req.method, url: signedUrl(req), headers: req.headers, rawBody: req.body as Buffer }, { keys: opts.keys, replayStore: bareNonces });
    if (!auth.ok) return reply.code(401).send({ error: auth.code });
    return reply.code(200).send({ status: 'accepted' });
  });

  // --- durable floors ---
  const hmacDb = openFloorDb(
    join(opts.dir, 'floor-ingest-hmac.db'),
    'CREATE TABLE deliveries (id INTEGER PRIMARY KEY, token TEXT NOT NULL, body BLOB NOT NULL, received_at INTEGER NOT NULL)',
  );
  const hmacCommitter = new TurnCommitter(hmacDb);
  const insertHmac = hmacDb.prepare('INSERT INTO deliveries (token, body, received_at) VALUES (?, ?, ?)');
  const floorHmac = rawBodyApp();
  floorHmac.post<{ Params: { token: string } }>(PATH, async (req, reply) => {
    if (!hmacValid(opts.secretByToken, req)) return reply.code(401).send({ error: 'unauthenticated' });
    await hmacCommitter.write(() => insertHmac.run(req.params.token, req.body as Buffer, Date.now()));
    return reply.code(200).send({ status: 'accepted' });
  });

  const rfcDb = openFloorDb(
    join(opts.dir, 'floor-ingest-rfc9421.db'),
    `CREATE TABLE deliveries (id INTEGER PRIMARY KEY, token TEXT NOT NULL, body BLOB NOT NULL,
       keyid TEXT NOT NULL, nonce TEXT NOT NULL, nonce_expires_at INTEGER NOT NULL, received_at INTEGER NOT NULL,
       UNIQUE (keyid, nonce))`,
  );
  const rfcCommitter = new TurnCommitter(rfcDb);
  const insertRfc = rfcDb.prepare(
    'INSERT INTO deliveries (token, body, keyid, nonce, nonce_expires_at, received_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (keyid, nonce) DO NOTHING',
  );
  const floorRfc = rawBodyApp();
  floorRfc.post<{ Params: { token: string } }>(PATH, async (req, reply) => {
    const nonce = new DeferredNonce(NO_SHARED_CACHE);
    const auth = await authenticateRfc9421({ method: req.method, url: signedUrl(req), headers: req.headers, rawBody: req.body as Buffer }, { keys: opts.keys, replayStore: nonce });
    if (!auth.ok) return reply.code(401).send({ error: auth.code });
    const n = nonce.pending!; // set by the verifier once the signature and digest are good
    const inserted = await rfcCommitter.write(() => insertRfc.run(req.params.token, req.body as Buffer, n.keyid, n.nonce, n.expiresAtMs, Date.now()).changes);
    if (inserted === 0) return reply.code(401).send({ error: 'webhook_signature_replayed' });
    return reply.code(200).send({ status: 'accepted' });
  });

  const listen = (app: FastifyInstance) => app.listen({ port: 0, host: '127.0.0.1' });
  const apps = [bareHmac, bareRfc, floorHmac, floorRfc];
  const [bh, br, fh, fr] = await Promise.all(apps.map(listen));
  const countHmac = hmacDb.prepare('SELECT count(*) FROM deliveries').pluck();
  const countRfc = rfcDb.prepare('SELECT count(*) FROM deliveries').pluck();
  return {
    bare: { hmac: bh!, rfc9421: br! },
    floor: { hmac: fh!, rfc9421: fr! },
    floorStored: (mode) => (mode === 'hmac' ? countHmac : countRfc).get() as number,
    floorGroupSize: (mode) => {
      const s = (mode === 'hmac' ? hmacCommitter : rfcCommitter).stats;
      return s.writes / Math.max(1, s.commits);
    },
    close: async () => {
      await Promise.all(apps.map((a) => a.close()));
      hmacDb.close();
      rfcDb.close();
    },
  };
}
