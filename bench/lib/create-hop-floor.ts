/**
 * The create floor behind an HTTP hop (bench/overhead.ts, information): the floor of
 * record (the SDK call with one durable commit before it and one after it) served by a
 * bare Fastify endpoint, so that the client reaches it the way it reaches us, with one
 * request and one answer over loopback. The distance from the floor of record to this
 * one is what the hop alone costs, whatever the service behind it does; the distance
 * from this one to ours is what our service does beyond the floor.
 *
 * Per request, nothing else: the bearer key checked against its SHA-256 (keys are
 * stored hashed), the request stored and committed, `callMCPTool` to the seller, the
 * reply stored and committed, 202 with the reply. Commits are group-committed once per
 * turn of the event loop (bench/lib/floor-sqlite.ts), as the floor of record's are.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import Fastify from 'fastify';
import { openFloorDb, TurnCommitter } from './floor-sqlite.js';

export interface HopFloor {
  url: string;
  /** The bearer key the endpoint accepts. */
  key: string;
  /** Calls stored, with their replies (each must equal the calls answered 202). */
  stored(): { rows: number; replies: number; answered: number };
  close(): Promise<void>;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest();

/**
 * The create floor's storage, one for the floor of record (bench/overhead.ts) and one
 * for this endpoint: each call's request stored and committed before it is sent, its
 * reply stored and committed after, group-committed once per turn of the event loop.
 */
export function openCreateFloorStore(path: string) {
  const db = openFloorDb(path, 'CREATE TABLE calls (id INTEGER PRIMARY KEY, idempotency_key TEXT NOT NULL UNIQUE, request TEXT NOT NULL, reply TEXT, sent_at INTEGER NOT NULL, replied_at INTEGER)');
  const committer = new TurnCommitter(db);
  const insertRequest = db.prepare('INSERT INTO calls (idempotency_key, request, sent_at) VALUES (?, ?, ?)');
  const updateReply = db.prepare('UPDATE calls SET reply = ?, replied_at = ? WHERE id = ?');
  return {
    /** Stores the request, committed; its row id. */
    storeRequest: (request: { idempotency_key: string }) => committer.write(() => insertRequest.run(request.idempotency_key, JSON.stringify(request), Date.now()).lastInsertRowid),
    /** Stores the reply of the call `id`, committed. */
    storeReply: (id: number | bigint, reply: unknown) => committer.write(() => updateReply.run(JSON.stringify(reply), Date.now(), id)),
    /** Rows and replies stored so far. */
    stored: () => db.prepare('SELECT count(*) AS rows, count(reply) AS replies FROM calls').get() as { rows: number; replies: number },
    close: () => db.close(),
  };
}

export async function startHopFloor(sellerUrl: string, dir: string): Promise<HopFloor> {
  const { callMCPTool } = await import('@adcp/sdk');
  const store = openCreateFloorStore(join(dir, 'floor-calls-hop.db'));
  const key = `floor_${randomUUID()}`;
  const keyHash = sha256(key);
  let answered = 0;

  const app = Fastify({ logger: false });
  app.post<{ Body: { request: Record<string, unknown> } }>('/v1/media-buys', async (req, res) => {
    const bearer = req.headers.authorization?.replace(/^Bearer /, '') ?? '';
    if (!timingSafeEqual(sha256(bearer), keyHash)) return res.code(401).send({ error: 'unauthorized' });
    const request = { ...req.body.request, idempotency_key: randomUUID() };
    const id = await store.storeRequest(request);
    const reply = (await callMCPTool(sellerUrl, 'create_media_buy', request)) as { structuredContent?: unknown };
    const body = reply?.structuredContent ?? reply;
    await store.storeReply(id, body);
    answered++;
    return res.code(202).send({ status: 'completed', result: body });
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url,
    key,
    stored: () => ({ ...store.stored(), answered }),
    close: async () => {
      await app.close();
      store.close();
    },
  };
}
